"""The dashboard's and the node page's trends over the snapshot history: time charts, each with
a summary for screen readers, of the points ``policy.web.trends`` reads (its ``Point`` and
``NodePoint``; not imported, as that module builds on the presenters)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.utils.safestring import SafeString

from policy.web.presenters import charts

RESOURCES = ("cpu", "memory")


@dataclass(frozen=True)
class TrendChart:
    title: str
    caption: str
    svg: SafeString


def _span(points: Sequence[Any]) -> str:
    first, last = points[0].taken_at, points[-1].taken_at
    return f"{len(points)} snapshots from {first:%Y-%m-%d %H:%M} to {last:%Y-%m-%d %H:%M} UTC"


def _change(values: Sequence[float | None], unit: str = "") -> str:
    known = [v for v in values if v is not None]
    if not known:
        return "no value"
    return f"{known[0]:g}{unit} to {known[-1]:g}{unit} (highest {max(known):g}{unit})"


def cluster_charts(points: Sequence[Any], thresholds: Mapping[str, int]) -> list[TrendChart]:
    """Per resource the mean, 90th percentile and highest node load (with the args threshold
    dashed), and the nodes above their threshold, filtered now, and pending pods."""
    if len(points) < 2:
        return []
    times = [p.taken_at for p in points]
    out = []
    for resource in RESOURCES:
        mean = [getattr(p, f"{resource}_mean") for p in points]
        p90 = [getattr(p, f"{resource}_p90") for p in points]
        top = [getattr(p, f"{resource}_max") for p in points]
        lines = [
            charts.Line("mean", mean, "a"),
            charts.Line("90th percentile", p90, "b"),
            charts.Line("highest", top, "#6b4fa8"),
        ]
        threshold = thresholds.get(resource, 0)
        if threshold:
            lines.append(
                charts.Line(
                    f"args threshold {threshold}%", [threshold] * len(points), "over", dashed=True
                )
            )
        label = (
            f"{resource} load of the nodes (% of allocatable) over the last {_span(points)}: "
            f"mean {_change(mean, '%')}; 90th percentile {_change(p90, '%')}; "
            f"highest {_change(top, '%')}"
        )
        out.append(
            TrendChart(
                f"{resource} load",
                "mean, 90th percentile and highest node load, % of allocatable",
                charts.time_lines(times, lines, label=label, unit="%", top=100),
            )
        )
    over = [p.over for p in points]
    filtered = [p.filtered for p in points]
    pending = [p.pods_pending for p in points]
    label = (
        f"Over the last {_span(points)}: nodes above their threshold {_change(over)}; "
        f"nodes filtered now {_change(filtered)}; pending pods {_change(pending)}"
    )
    out.append(
        TrendChart(
            "Filtered now",
            "nodes above their threshold, nodes LoadAware filters, pending pods",
            charts.time_lines(
                times,
                [
                    charts.Line("nodes above threshold", over, "over"),
                    charts.Line("nodes filtered", filtered, "error"),
                    charts.Line("pending pods", pending, "line"),
                ],
                label=label,
            ),
        )
    )
    return out


def _threshold(value: int | None) -> int | None:
    return value or None  # 0: not checked


def node_chart(name: str, points: Sequence[Any]) -> TrendChart | None:
    """The node's cpu and memory load over time, with its thresholds dashed."""
    if len(points) < 2:
        return None
    times = [p.taken_at for p in points]
    cpu = [p.cpu for p in points]
    memory = [p.memory for p in points]
    lines = [charts.Line("cpu load", cpu, "a"), charts.Line("memory load", memory, "b")]
    cpu_threshold = [_threshold(p.cpu_threshold) for p in points]
    memory_threshold = [_threshold(p.memory_threshold) for p in points]
    if any(cpu_threshold):
        lines.append(charts.Line("cpu threshold", cpu_threshold, "a", dashed=True))
    if any(memory_threshold):
        lines.append(charts.Line("memory threshold", memory_threshold, "b", dashed=True))
    label = (
        f"Load of node {name} (% of allocatable) over the last {_span(points)}: "
        f"cpu {_change(cpu, '%')}; memory {_change(memory, '%')}"
    )
    return TrendChart(
        "Load over time",
        "cpu and memory load, % of allocatable; dashed: the node's thresholds",
        charts.time_lines(times, lines, label=label, unit="%", top=100),
    )
