"""What-if: one workload under several configurations from the same starting cluster.

Every configuration gets its own copy of the starting snapshot (``Snapshot.copy``), so runs
cannot see each other's placements. The report is the ``simulate`` JSON of the engine CLI
contract: per run the pods placed and unschedulable, each pod's node or reason, and the
utilization after placement; with two runs, the pods whose node differs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from scoring.engine import Engine
from scoring.objects import Pod
from scoring.simulation.metrics import (
    reported_resources,
    requested_distribution,
    utilization,
)
from scoring.simulation.simulator import SimulationRun, route, simulate
from scoring.snapshot import Snapshot


@dataclass(frozen=True)
class Difference:
    """A pod placed differently by two runs (None: unschedulable in that run)."""

    pod: str
    nodes: tuple[str | None, str | None]

    def to_dict(self) -> dict[str, Any]:
        return {"pod": self.pod, "nodes": list(self.nodes)}


def what_if(
    snapshot: Snapshot,
    pods: Sequence[Pod],
    now: datetime,
    configurations: Sequence[tuple[str, Engine]],
    *,
    use_cache: bool = True,
    progress: Callable[[int], None] | None = None,
    starts: Sequence[Snapshot] | None = None,
    unrouted_pending: bool = False,
) -> list[SimulationRun]:
    """Place ``pods`` under each ``(label, engine)`` on its own copy of ``snapshot``.

    Every pod is routed in every configuration before anything is placed, so a missing profile
    is reported before any work is done. ``progress`` gets the pods done over all runs (of
    ``len(pods) * len(configurations)``). ``starts`` gives each configuration its own starting
    snapshot instead (the same nodes, e.g. with other node annotations). ``unrouted_pending``
    leaves pods whose schedulerName a configuration has no profile for pending in that run, as
    kube-scheduler would, instead of refusing the workload.
    """
    for _, engine in configurations:
        for pod in pods:
            route(engine, pod, unrouted_pending)
    runs = []
    for k, (label, engine) in enumerate(configurations):
        offset = k * len(pods)
        step = None if progress is None else _offset(progress, offset)
        start = snapshot if starts is None else starts[k]
        if start.node_names != snapshot.node_names:
            raise ValueError("every starting snapshot must have the same nodes, in order")
        runs.append(
            simulate(
                engine,
                start.copy(),
                pods,
                now,
                use_cache=use_cache,
                label=label,
                progress=step,
                unrouted_pending=unrouted_pending,
            )
        )
    return runs


def _offset(progress: Callable[[int], None], offset: int) -> Callable[[int], None]:
    return lambda done: progress(offset + done)


def differences(base: SimulationRun, other: SimulationRun) -> list[Difference]:
    """Pods (in workload order) whose selected node differs between the two runs."""
    return [
        Difference(a.pod.key, (a.node, b.node))
        for a, b in zip(base.placements, other.placements, strict=True)
        if a.node != b.node
    ]


SPREAD_BINS = 10  # workload pods per node: 0 … 9, then "10 or more"


def cluster_state(
    engine: Engine, snapshot: Snapshot, now: datetime, resources: Sequence[str]
) -> dict[str, Any]:
    """Utilization per resource and its distribution over 10% bands, as ``engine`` judges it."""
    usage = utilization(engine, snapshot, now, list(resources))
    return {
        "utilization": {name: entry.to_dict() for name, entry in usage.items()},
        "distribution": {
            name: requested_distribution(snapshot, name)
            for name in resources
            if name in snapshot.resource_index
        },
    }


def pods_per_node(run: SimulationRun) -> list[int]:
    """How many nodes got 0, 1, … :data:`SPREAD_BINS` or more of the workload's pods: a
    spreading configuration fills the low bins, a packing one the ends."""
    placed = Counter(p.node for p in run.placements if p.node is not None)
    bins = [0] * (SPREAD_BINS + 1)
    for name in run.snapshot.node_names:
        bins[min(placed.get(name, 0), SPREAD_BINS)] += 1
    return bins


def unmodeled_scorers(run: SimulationRun) -> dict[str, list[str]]:
    """Per profile the run used: the score plugins the engine skips (they could have ranked the
    nodes differently in the real scheduler)."""
    used = sorted({p.profile for p in run.placements})
    frameworks = run.engine.frameworks
    return {
        name: frameworks[name].unmodeled_scorers
        for name in used
        if name in frameworks and frameworks[name].unmodeled_scorers
    }


def run_summary(run: SimulationRun, resources: Sequence[str]) -> dict[str, Any]:
    """One run without its per-pod list: counts, the cluster after it, timing and cache."""
    because = unmodeled_scorers(run)
    return {
        "config": run.label,
        "placed": run.placed,
        "unschedulable": run.unschedulable,
        **cluster_state(run.engine, run.snapshot, run.now, resources),
        "podsPerNode": pods_per_node(run),
        "seconds": round(run.seconds, 3),
        "cache": None if run.cache is None else run.cache.to_dict(),
        "rankingMayDiffer": bool(because),
        "rankingMayDifferBecause": because,
    }


def run_report(run: SimulationRun, resources: list[str]) -> dict[str, Any]:
    """One run as the contract's ``runs[]`` entry (plus the summary's extra fields)."""
    pods = [
        {"pod": p.pod.key, "profile": p.profile, "selectedNode": p.node, "reason": p.reason}
        for p in run.placements
    ]
    return {**run_summary(run, resources), "pods": pods}


def simulation_report(runs: Sequence[SimulationRun]) -> dict[str, Any]:
    """The ``simulate`` JSON: every run, and ``differences`` when two runs are compared."""
    pods = [p.pod for p in runs[0].placements] if runs else []
    resources = reported_resources(runs[0].snapshot, pods) if runs else []
    report: dict[str, Any] = {"runs": [run_report(run, resources) for run in runs]}
    if len(runs) == 2:
        report["differences"] = [d.to_dict() for d in differences(runs[0], runs[1])]
    return report
