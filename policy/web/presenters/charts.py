"""Charts drawn with pygal on the server: SVG that needs no JavaScript to be read.

pygal's interactive tooltips need its script from a CDN, so it is left out (``js=[]``, and the
inline config for it dropped, which also keeps pages within a strict CSP): each
value's label becomes an SVG ``<title>`` instead (the browser's own tooltip, read by screen
readers), the root gets ``role="img"`` and an ``aria-label`` summary, and colours follow the
stylesheet's palette. pygal escapes all text it is given.

pygal also puts a copy of its stylesheet, scoped by the chart's id, in every chart: a dozen KB
per chart. Charts here carry none. Its rules are served once, scoped to every chart
(``static/charts.css``, written by ``python -m policy.web.presenters.charts``), and each
series' colour, the only rule that differs between charts, becomes ``fill``/``stroke``
attributes of the elements of that series.
"""

from __future__ import annotations

import math
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pygal
from django.utils.safestring import SafeString, mark_safe
from pygal.style import Style

# Series colours by meaning (the stylesheet's swatches use the same).
COLOURS = {
    "ok": "#4a7fd0",
    "scheduled": "#4a7fd0",
    "over": "#d0574e",
    "unschedulable": "#d0574e",
    "error": "#e0a100",
    "a": "#4a7fd0",
    "b": "#e08a2c",
    "before": "#aab4c2",
    "line": "#1f5fbf",
}
FONT = 'system-ui, -apple-system, "Segoe UI", sans-serif'


def _style(colours: Sequence[str]) -> Style:
    return Style(
        background="transparent",
        plot_background="transparent",
        foreground="#1d2430",
        foreground_strong="#1d2430",
        foreground_subtle="#d9dee5",
        colors=tuple(colours),
        font_family=FONT,
        label_font_size=11,
        major_label_font_size=11,
        legend_font_size=12,
        value_font_size=11,
        title_font_size=13,
        opacity="1",
        opacity_hover="0.8",
        transition="0s",
    )


def _options(colours: Sequence[str], **extra: Any) -> dict[str, Any]:
    options: dict[str, Any] = {
        "style": _style(colours),
        "js": [],
        "disable_xml_declaration": True,
        "explicit_size": False,
        "show_y_guides": True,
        "print_values": False,
        "legend_at_bottom": True,
        "truncate_legend": -1,
        "margin": 6,
    }
    options.update(extra)
    return options


def _finish(chart: Any, label: str, css_class: str = "chart") -> SafeString:
    """Render ``chart`` with tooltips as ``<title>``s and an accessible root element."""
    tree: ET.Element = chart.render_tree()
    tree.set("class", f"{css_class} pygal-chart")
    tree.set("role", "img")
    tree.set("aria-label", label)
    # pygal titles an untitled chart "Pygal"; the summary says more.
    for old in tree.findall("title"):
        tree.remove(old)
    title = ET.Element("title")
    title.text = label
    tree.insert(0, title)
    colours = chart.config.style.colors
    for parent in tree.iter():
        _colour(parent, colours)
        for child in list(parent):
            if child.tag in ("script", "style") or not isinstance(child.tag, str):
                parent.remove(child)  # pygal.js config (not loaded), its CSS, its comments
            elif child.tag == "defs" and not len(child):
                parent.remove(child)
            elif child.tag == "desc" and child.get("class") == "label" and child.text:
                tip = ET.Element("title")
                tip.text = child.text
                parent.insert(0, tip)
                if parent.tag == "a":
                    parent.set("aria-label", child.text)
    return mark_safe(ET.tostring(tree, encoding="unicode"))


_SERIES_COLOUR = re.compile(r"(?:^|\s)color-(\d+)(?:\s|$)")


def _colour(element: ET.Element, colours: Sequence[str]) -> None:
    """Give an element of series ``color-N`` (its group, its legend box) that series' colour,
    as pygal's per-chart ``.color-N`` rule did."""
    found = _SERIES_COLOUR.search(element.get("class", ""))
    if found:
        colour = colours[int(found.group(1)) % len(colours)]
        element.set("fill", colour)
        element.set("stroke", colour)


def shared_stylesheet() -> str:
    """pygal's chart stylesheet for this module's style, scoped to every chart
    (``.pygal-chart``) instead of one chart's id, without the series colours."""
    chart = pygal.Bar(**_options([COLOURS["ok"]]))
    chart.add("", [1])
    tree: ET.Element = chart.render_tree()
    rules: list[str] = []
    for style in tree.iter("style"):
        text = re.sub(r"#chart-[0-9a-f-]+", ".pygal-chart", style.text or "")
        for rule in text.replace("\n", "").split("}"):
            if not rule.strip():
                continue
            if ".color-" in rule:  # per chart: attributes of the series' elements instead
                if ".text-overlay" not in rule:
                    continue
                rule = re.sub(r"\.color-\d+ ", "", rule)
            if rule + "}" not in rules:
                rules.append(rule + "}")
    return "\n".join(rules) + "\n"


def _count_ticks(highest: float) -> list[int]:
    """About five whole-number ticks from 0 up to at least ``highest`` (counts of things)."""
    top = max(math.ceil(highest), 1)
    magnitude = 1
    while True:
        for step in (magnitude, 2 * magnitude, 5 * magnitude):
            if top / step <= 5:
                return list(range(0, math.ceil(top / step) * step + 1, step))
        magnitude *= 10


def _value(count: int, tip: str, href: str = "") -> dict[str, Any]:
    value: dict[str, Any] = {"value": count, "label": tip}
    if href and count:
        value["xlink"] = {"href": href, "target": "_self"}
    return value


@dataclass(frozen=True)
class Bin:
    """One histogram bar: nodes within their threshold (``ok``) and above it (``over``)."""

    label: str
    ok: int
    over: int
    href: str = ""
    axis: str = ""  # the short axis label (default: ``label``)

    @property
    def total(self) -> int:
        return self.ok + self.over


def _nodes(n: int) -> str:
    return f"{n} node{'s' if n != 1 else ''}"


def histogram(bins: Sequence[Bin], *, label: str, marked: int | None = None) -> SafeString:
    """Nodes per band, stacked within / above their threshold; every bar links to its nodes.

    The axis label of bin ``marked`` is emphasised with a ▲ (e.g. the band the args threshold
    falls in).
    """
    labels = [
        f"▲{b.axis or b.label}" if k == marked else b.axis or b.label for k, b in enumerate(bins)
    ]
    chart = pygal.StackedBar(
        **_options(
            [COLOURS["ok"], COLOURS["over"]],
            x_labels=labels,
            x_labels_major=[labels[marked]] if marked is not None else [],
            show_minor_x_labels=len(bins) <= 12,
            x_label_rotation=0 if len(bins) <= 12 else 35,
            y_labels=_count_ticks(max((b.total for b in bins), default=0)),
            height=240,
            width=560,
        )
    )

    def tip(b: Bin) -> str:
        text = f"{b.label}: {_nodes(b.total)}"
        return text + (f" ({b.over} above their threshold)" if b.over else "")

    chart.add("within threshold", [_value(b.ok, tip(b), b.href) for b in bins])
    chart.add("above threshold", [_value(b.over, tip(b), b.href) for b in bins])
    return _finish(chart, label)


def sparkline(values: Sequence[float], *, label: str) -> SafeString:
    """A small line over ``values`` (oldest first)."""
    if not values:
        return mark_safe("")
    chart = pygal.Line(
        **_options(
            [COLOURS["line"]],
            show_legend=False,
            show_x_labels=False,
            show_y_labels=False,
            show_y_guides=False,
            show_dots=False,
            height=50,
            width=200,
            margin=2,
            spacing=0,
        )
    )
    chart.add("", list(values))
    return _finish(chart, label, "spark")


@dataclass(frozen=True)
class Stack:
    """One column of a stacked bar chart: a label and (series, count) segments."""

    label: str
    segments: Sequence[tuple[str, int]]


def stacked_columns(columns: Sequence[Stack], *, label: str) -> SafeString:
    """Columns of stacked segments (e.g. decisions per day by outcome)."""
    series = [name for name, _ in columns[0].segments] if columns else []
    chart = pygal.StackedBar(
        **_options(
            [COLOURS.get(name, COLOURS["line"]) for name in series],
            x_labels=[c.label for c in columns],
            x_label_rotation=0 if len(columns) <= 8 else 35,
            y_labels=_count_ticks(max((sum(n for _, n in c.segments) for c in columns), default=0)),
            height=220,
            width=620,
        )
    )
    for k, name in enumerate(series):
        values = []
        for column in columns:
            n = column.segments[k][1]
            total = ", ".join(f"{m} {s}" for s, m in column.segments if m) or "none"
            values.append(_value(n, f"{column.label}: {total}"))
        chart.add(name, values)
    return _finish(chart, label)


def compared_bars(
    categories: Sequence[str],
    series: Sequence[tuple[str, Sequence[float]]],
    *,
    label: str,
    counts: bool = False,
    colours: Sequence[str] = ("a", "b"),
    height: int = 260,
) -> SafeString:
    """Side-by-side bars per category, one series per compared state (``colours`` names the
    palette entries in series order: baseline blue, candidate orange, "before" grey)."""
    extra: dict[str, Any] = {}
    if counts:
        highest = max((v for _, values in series for v in values), default=0)
        extra["y_labels"] = _count_ticks(highest)
    chart = pygal.Bar(
        **_options(
            [COLOURS[c] for c in colours],
            x_labels=list(categories),
            x_label_rotation=0 if len(categories) <= 6 else 30,
            height=height,
            width=620,
            **extra,
        )
    )
    for name, values in series:
        chart.add(
            name,
            [
                {"value": v, "label": f"{name}, {c}: {v:g}"}
                for c, v in zip(categories, values, strict=True)
            ],
        )
    return _finish(chart, label)


if __name__ == "__main__":  # python -m policy.web.presenters.charts > static/charts.css
    sys.stdout.write(
        "/* pygal's chart stylesheet, shared by every chart "
        "(python -m policy.web.presenters.charts). */\n" + shared_stylesheet()
    )
