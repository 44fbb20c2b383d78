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


# Two percentages closer than this many points are "same": the spread of a few pods more or
# less, not a difference between the configurations (docs/what-if.md, "Verdicts").
NOISE_POINTS = 0.5


@dataclass(frozen=True)
class Metric:
    """One row of the side-by-side table: a name, both values, which side is better (0: A,
    1: B, None: same or not compared) and the verdict in words, naming what it compares."""

    name: str
    values: tuple[str, str]
    better: int | None
    verdict: str = ""


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _counted(
    name: str,
    a: int | None,
    b: int | None,
    fewer_is_better: bool,
    unit: str,
    shown: tuple[str, str] | None = None,
) -> Metric:
    """A count: any difference is one (a pod or a node more is not noise)."""
    values = shown or (str(a), str(b))
    if a is None or b is None:
        return Metric(name, values, None, "not compared: one side has no value")
    if a == b:
        return Metric(name, values, None, "same")
    side = (0 if a < b else 1) if fewer_is_better else (0 if a > b else 1)
    word = "fewer" if (a < b) == (side == 0) else "more"
    return Metric(name, values, side, f"{'AB'[side]}: {abs(a - b)} {unit} {word}")


def _share(name: str, a: float, b: float) -> Metric:
    """A share of allocatable where lower is better; within the noise rule it is "same"."""
    values = (_pct(a), _pct(b))
    points = abs(a - b) * 100
    if points < NOISE_POINTS:
        detail = f" ({points:.1f} points, under {NOISE_POINTS} points)" if points else ""
        return Metric(name, values, None, f"same{detail}")
    side = 0 if a < b else 1
    return Metric(name, values, side, f"{'AB'[side]}: {points:.1f} points lower")


def _described(name: str, values: tuple[str, str]) -> Metric:
    """A row that describes a side (what changed) and is no better or worse."""
    return Metric(name, values, None, "same" if values[0] == values[1] else "changed")


def metrics(runs: Sequence[Mapping[str, Any]], resources: Sequence[str]) -> list[Metric]:
    a, b = runs
    rows = [
        _described("node thresholds", (_thresholds(a), _thresholds(b))),
        _counted("pods placed", a["placed"], b["placed"], False, "pods"),
        _counted("pods unschedulable", a["unschedulable"], b["unschedulable"], True, "pods"),
    ]
    if a.get("pending") or b.get("pending"):
        rows.append(
            Metric(
                "pods pending: no profile for their schedulerName",
                (str(a.get("pending", 0)), str(b.get("pending", 0))),
                None,
                "not compared: a missing profile, not a placement",
            )
        )
    for name in resources:
        ua, ub = a["utilization"].get(name), b["utilization"].get(name)
        if not ua or not ub:
            continue
        rows += [
            _described(f"{name} requested, mean", (_pct(ua["mean"]), _pct(ub["mean"]))),
            _share(f"{name} spread (std. dev., lower is more even)", ua["stddev"], ub["stddev"]),
            _share(f"{name} busiest node", ua["max"], ub["max"]),
            _over_threshold(name, ua, ub),
            _counted(
                f"{name} nodes whose limits exceed allocatable",
                ua["limitOversubscribed"],
                ub["limitOversubscribed"],
                True,
                "nodes",
            ),
        ]
    return rows


def _over_threshold(name: str, ua: Mapping[str, Any], ub: Mapping[str, Any]) -> Metric:
    """Nodes over their threshold compare only under the same thresholds: with a raised
    threshold fewer nodes are over it by definition, which says nothing of the placement."""
    title = f"{name} nodes over their LoadAware threshold"
    values = (_count(ua["overThreshold"]), _count(ub["overThreshold"]))
    ta, tb = ua.get("thresholds"), ub.get("thresholds")
    if ua["overThreshold"] is None or ub["overThreshold"] is None:
        return Metric(title, values, None, "not compared: LoadAware is off on one side")
    if ta is None or tb is None:
        return Metric(title, values, None, "not compared: the thresholds used are not recorded")
    if ta != tb:
        return Metric(
            title,
            values,
            None,
            f"not compared: the thresholds differ (A: {_levels(ta)}; B: {_levels(tb)})",
        )
    return _counted(title, ua["overThreshold"], ub["overThreshold"], True, "nodes", values)


def _levels(levels: Mapping[str, int]) -> str:
    parts = sorted(levels.items(), key=lambda item: -item[1])
    return ", ".join(f"{t}% on {n} node{'s' if n != 1 else ''}" for t, n in parts) or "none"


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
