"""Server-side SVG charts (as NetBox draws its rack elevations): no JavaScript, no library.

Each chart is a small ``<svg role="img">`` with an ``aria-label`` summary and ``<title>``
tooltips; all text is escaped here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe


@dataclass(frozen=True)
class Bin:
    """One histogram bar: nodes within their threshold (``ok``) and above it (``over``)."""

    label: str
    ok: int
    over: int
    href: str = ""

    @property
    def total(self) -> int:
        return self.ok + self.over


def _fmt(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def histogram(
    bins: Sequence[Bin],
    *,
    label: str,
    marker: float | None = None,
    marker_label: str = "",
    axis: Sequence[tuple[float, str]] = (),
    width: int = 520,
    height: int = 170,
) -> SafeString:
    """Stacked bars, one per bin; ``marker`` is a vertical line at that fraction (0..1) of the
    bar area (e.g. the args threshold); ``axis`` places tick labels at fractions."""
    left, right, top, bottom = 34, 8, 16, 22
    plot_w, plot_h = width - left - right, height - top - bottom
    highest = max((b.total for b in bins), default=0) or 1
    step = plot_w / max(len(bins), 1)
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(label)}" preserveAspectRatio="xMinYMin meet">',
        f'<line class="axis" x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" '
        f'y2="{top + plot_h}"/>',
        f'<text class="tick" x="{left - 4}" y="{top + 4}" text-anchor="end">{highest}</text>',
        f'<text class="tick" x="{left - 4}" y="{top + plot_h}" text-anchor="end">0</text>',
    ]
    for k, b in enumerate(bins):
        x = left + k * step + 1
        w = max(step - 2, 1)
        ok_h = plot_h * b.ok / highest
        over_h = plot_h * b.over / highest
        y_ok = top + plot_h - ok_h
        y_over = y_ok - over_h
        tip = f"{b.label}: {b.total} node{'s' if b.total != 1 else ''}"
        if b.over:
            tip += f" ({b.over} above their threshold)"
        bar = (
            f"<g><title>{escape(tip)}</title>"
            f'<rect class="hit" x="{_fmt(x)}" y="{top}" width="{_fmt(w)}" height="{plot_h}"/>'
        )
        if b.ok:
            bar += (
                f'<rect class="ok" x="{_fmt(x)}" y="{_fmt(y_ok)}" width="{_fmt(w)}" '
                f'height="{_fmt(ok_h)}"/>'
            )
        if b.over:
            bar += (
                f'<rect class="over" x="{_fmt(x)}" y="{_fmt(y_over)}" width="{_fmt(w)}" '
                f'height="{_fmt(over_h)}"/>'
            )
        bar += "</g>"
        if b.href and b.total:
            bar = f'<a href="{escape(b.href)}" aria-label="{escape(tip)}">{bar}</a>'
        parts.append(bar)
    for fraction, text in axis:
        x = left + plot_w * fraction
        parts.append(
            f'<text class="tick" x="{_fmt(x)}" y="{height - 6}" text-anchor="middle">'
            f"{escape(text)}</text>"
        )
    if marker is not None:
        x = left + plot_w * marker
        parts.append(
            f'<line class="marker" x1="{_fmt(x)}" y1="{top - 4}" x2="{_fmt(x)}" '
            f'y2="{top + plot_h}"/>'
            f'<text class="marker-label" x="{_fmt(x + 3 if marker < 0.6 else x - 3)}" '
            f'y="{top - 5}" text-anchor="{"start" if marker < 0.6 else "end"}">'
            f"{escape(marker_label)}</text>"
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))


def sparkline(
    values: Sequence[float],
    *,
    label: str,
    width: int = 160,
    height: int = 36,
) -> SafeString:
    """A line over ``values`` (oldest first) with the last point marked."""
    if not values:
        return mark_safe("")
    low, high = min(values), max(values)
    span = (high - low) or 1
    pad = 3
    step = (width - 2 * pad) / max(len(values) - 1, 1)

    def point(k: int, v: float) -> tuple[float, float]:
        return pad + k * step, height - pad - (height - 2 * pad) * (v - low) / span

    coords = [point(k, v) for k, v in enumerate(values)]
    path = " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in coords)
    lx, ly = coords[-1]
    return mark_safe(
        f'<svg class="spark" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(label)}"><title>{escape(label)}</title>'
        f'<polyline points="{path}"/><circle cx="{_fmt(lx)}" cy="{_fmt(ly)}" r="2.5"/></svg>'
    )


@dataclass(frozen=True)
class Stack:
    """One column of a stacked bar chart: a label and (class, count, tooltip) segments."""

    label: str
    segments: Sequence[tuple[str, int]]


def stacked_columns(
    columns: Sequence[Stack],
    *,
    label: str,
    width: int = 520,
    height: int = 140,
) -> SafeString:
    """Columns of stacked segments (e.g. decisions per day by outcome)."""
    left, right, top, bottom = 30, 4, 8, 20
    plot_w, plot_h = width - left - right, height - top - bottom
    highest = max((sum(n for _, n in c.segments) for c in columns), default=0) or 1
    step = plot_w / max(len(columns), 1)
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(label)}">',
        f'<line class="axis" x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" '
        f'y2="{top + plot_h}"/>',
        f'<text class="tick" x="{left - 4}" y="{top + 8}" text-anchor="end">{highest}</text>',
    ]
    every = max(1, len(columns) // 7)
    for k, column in enumerate(columns):
        x = left + k * step + 1
        w = max(step - 2, 1)
        y: float = top + plot_h
        tip = ", ".join(f"{n} {cls}" for cls, n in column.segments if n) or "none"
        parts.append(f"<g><title>{escape(column.label)}: {escape(tip)}</title>")
        parts.append(
            f'<rect class="hit" x="{_fmt(x)}" y="{top}" width="{_fmt(w)}" height="{plot_h}"/>'
        )
        for cls, n in column.segments:
            if not n:
                continue
            h = plot_h * n / highest
            y -= h
            parts.append(
                f'<rect class="{escape(cls)}" x="{_fmt(x)}" y="{_fmt(y)}" width="{_fmt(w)}" '
                f'height="{_fmt(h)}"/>'
            )
        parts.append("</g>")
        if k % every == 0:
            parts.append(
                f'<text class="tick" x="{_fmt(x + w / 2)}" y="{height - 5}" '
                f'text-anchor="middle">{escape(column.label)}</text>'
            )
    parts.append("</svg>")
    return mark_safe("".join(parts))
