"""A stored what-if report laid out for its page: both sides' numbers, charts, moved pods."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.utils.safestring import SafeString

from policy.web.presenters import charts

BAND = 10  # percent per distribution band (scoring.simulation.metrics.DISTRIBUTION_BAND)


def band_labels(count: int) -> list[str]:
    return [f"{k * BAND}%" if k < count - 1 else f"≥{k * BAND}%" for k in range(count)]


@dataclass(frozen=True)
class Metric:
    """One row of the side-by-side table: a name, both values, and which side is better."""

    name: str
    values: tuple[str, str]
    better: int | None  # 0: baseline, 1: candidate, None: equal or not comparable


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _better(a: float | None, b: float | None, lower_is_better: bool = True) -> int | None:
    if a is None or b is None or a == b:
        return None
    return (0 if a < b else 1) if lower_is_better else (0 if a > b else 1)


def metrics(runs: Sequence[Mapping[str, Any]], resources: Sequence[str]) -> list[Metric]:
    a, b = runs
    rows = [
        Metric("node thresholds", (_thresholds(a), _thresholds(b)), None),
        Metric(
            "pods placed",
            (str(a["placed"]), str(b["placed"])),
            _better(a["placed"], b["placed"], False),
        ),
        Metric(
            "pods unschedulable",
            (str(a["unschedulable"]), str(b["unschedulable"])),
            _better(a["unschedulable"], b["unschedulable"]),
        ),
    ]
    if a.get("pending") or b.get("pending"):
        rows.append(
            Metric(
                "pods pending: no profile for their schedulerName",
                (str(a.get("pending", 0)), str(b.get("pending", 0))),
                None,  # a missing profile, not a better or worse placement
            )
        )
    for name in resources:
        ua, ub = a["utilization"].get(name), b["utilization"].get(name)
        if not ua or not ub:
            continue
        rows += [
            Metric(f"{name} requested, mean", (_pct(ua["mean"]), _pct(ub["mean"])), None),
            Metric(
                f"{name} spread (std. dev., lower is more even)",
                (_pct(ua["stddev"]), _pct(ub["stddev"])),
                _better(ua["stddev"], ub["stddev"]),
            ),
            Metric(
                f"{name} busiest node",
                (_pct(ua["max"]), _pct(ub["max"])),
                _better(ua["max"], ub["max"]),
            ),
            Metric(
                f"{name} nodes over their LoadAware threshold",
                (_count(ua["overThreshold"]), _count(ub["overThreshold"])),
                _better(ua["overThreshold"], ub["overThreshold"]),
            ),
            Metric(
                f"{name} nodes whose limits exceed allocatable",
                (str(ua["limitOversubscribed"]), str(ub["limitOversubscribed"])),
                _better(ua["limitOversubscribed"], ub["limitOversubscribed"]),
            ),
        ]
    return rows


def _thresholds(run: Mapping[str, Any]) -> str:
    if not run.get("thresholdsFromPolicies"):
        return "as the snapshot has them"
    changed = run.get("annotationsChanged", 0)
    return f"stored policies ({changed} node{'s' if changed != 1 else ''} changed)"


def _count(value: int | None) -> str:
    return "n/a (LoadAware off)" if value is None else str(value)


def distribution_chart(result: Mapping[str, Any], resource: str) -> SafeString | None:
    """Nodes per band of requested / allocatable: before, and after each side."""
    before = result["before"]["distribution"].get(resource)
    sides = [run["distribution"].get(resource) for run in result["runs"]]
    if before is None or any(side is None for side in sides):
        return None
    labels = band_labels(len(before))
    series = [("before", before)] + [
        (run["config"], side) for run, side in zip(result["runs"], sides, strict=True)
    ]
    a, b = sides
    return charts.compared_bars(
        labels,
        series,
        label=f"{resource}: nodes per 10% band of requested / allocatable, before the workload "
        f"and after it under each configuration (busiest band after: "
        f"{labels[_top(a)]} vs {labels[_top(b)]})",
        counts=True,
        colours=("before", "a", "b"),
    )


def _top(counts: Sequence[int]) -> int:
    return max((k for k, n in enumerate(counts) if n), default=0)


def outcome_chart(result: Mapping[str, Any], resources: Sequence[str]) -> SafeString:
    """Placed / unschedulable pods and nodes over threshold, side by side."""
    a, b = result["runs"]
    categories = ["placed", "unschedulable"]
    values: list[list[float]] = [
        [a["placed"], a["unschedulable"]],
        [b["placed"], b["unschedulable"]],
    ]
    if a.get("pending") or b.get("pending"):
        categories.append("pending (no profile)")
        values[0].append(a.get("pending", 0))
        values[1].append(b.get("pending", 0))
    for name in resources:
        if a["utilization"].get(name, {}).get("overThreshold") is None:
            continue
        if b["utilization"].get(name, {}).get("overThreshold") is None:
            continue
        categories.append(f"{name} nodes over threshold")
        values[0].append(a["utilization"][name]["overThreshold"])
        values[1].append(b["utilization"][name]["overThreshold"])
    summary = ", ".join(
        f"{c}: {x:g} vs {y:g}" for c, x, y in zip(categories, values[0], values[1], strict=True)
    )
    return charts.compared_bars(
        categories,
        [(a["config"], values[0]), (b["config"], values[1])],
        label=f"Outcome per configuration: {summary}",
        counts=True,
    )


def spread_chart(result: Mapping[str, Any]) -> SafeString | None:
    """Nodes by how many of the workload's pods they got, under each configuration."""
    sides = [run.get("podsPerNode") for run in result["runs"]]
    if any(side is None for side in sides):
        return None  # a report from before this chart
    count = len(sides[0])
    labels = [str(k) if k < count - 1 else f"≥{k}" for k in range(count)]
    busiest = [_top(side) for side in sides]
    return charts.compared_bars(
        labels,
        [(run["config"], side) for run, side in zip(result["runs"], sides, strict=True)],
        label="Nodes by the number of the workload's pods they got: "
        f"at most {labels[busiest[0]]} under A, {labels[busiest[1]]} under B",
        counts=True,
    )


def moved_pods(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The pods placed differently, each side's node or what became of the pod instead."""
    return [
        {
            "pod": d["pod"],
            "baseline": _where(d, 0),
            "candidate": _where(d, 1),
        }
        for d in result.get("differences", [])
    ]


def _where(difference: Mapping[str, Any], side: int) -> str:
    node = difference["nodes"][side]
    if node is not None:
        return str(node)
    pending = difference.get("pending") or [False, False]
    return "pending (no profile for its schedulerName)" if pending[side] else "unschedulable"


def pending_notes(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per side that left pods pending: how many and why (kube-scheduler ignores a pod whose
    schedulerName none of its profiles has; the pod stays Pending)."""
    notes = []
    for letter, run in zip("AB", runs, strict=False):
        count = run.get("pending", 0)
        if not count:
            continue
        why = "; ".join(f"{r['reason']} ({r['pods']})" for r in run.get("pendingReasons", []))
        notes.append(
            f"{letter}: {count} pod{'s' if count != 1 else ''} stay pending: {why}. "
            "kube-scheduler ignores a pod whose schedulerName none of its profiles has."
        )
    return notes
