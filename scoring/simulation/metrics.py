"""How a cluster looks after a simulated placement: utilization spread, load, limit commitments.

Per resource (cpu and memory, plus extended resources the workload requests):

- ``mean`` / ``stddev`` / ``max`` of requested / allocatable over the nodes that have the
  resource (population standard deviation: lower means better balanced);
- ``overThreshold`` (only when a profile enables LoadAwareScheduling): nodes whose usage as that
  plugin judges it, measured NodeMetric usage plus the estimates of recently placed pods, is
  above the node's effective threshold (args, or the node's ``usage-thresholds`` annotation),
  i.e. nodes its Filter would now reject even for a pod estimated at zero;
- ``distribution``: nodes per 10% band of requested / allocatable (the last band: 100% and
  more), for charts;
- ``limitOversubscribed``: nodes whose pods' summed limits exceed allocatable. A container
  without a limit counts its request, as Koordinator's LimitAware does (``max(limit, request)``
  per container, koordinator pkg/scheduler/plugins/limitaware/util.go).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from scoring.engine import Engine
from scoring.objects import Pod
from scoring.plugins.limitaware.limits import RAW, LimitTotals
from scoring.plugins.limitaware.plugin import LimitAware
from scoring.plugins.loadaware.args import PLUGIN_NAME
from scoring.plugins.loadaware.filter import estimated_usage, exceeds, expired_nodes, filter_plan
from scoring.plugins.loadaware.node_load import adds_nothing, state_at
from scoring.plugins.loadaware.plugin import LoadAwareScheduling
from scoring.plugins.noderesources import is_scalar_resource
from scoring.snapshot import Snapshot

LIMIT_AWARE = "LimitAware"
BASE_RESOURCES = ("cpu", "memory")
# A pod requesting and estimating nothing: LoadAwareScheduling's Filter rejects it exactly on
# the nodes already above their threshold.


@dataclass(frozen=True)
class ResourceUtilization:
    mean: float
    stddev: float
    max: float
    nodes: int  # nodes that have the resource
    over_threshold: int | None
    limit_oversubscribed: int
    # Nodes per LoadAware threshold (percent) the over-threshold count used: two runs' counts
    # compare only when these are equal (a raised threshold lowers the count by definition).
    thresholds: dict[str, int] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "mean": round(self.mean, 4),
            "stddev": round(self.stddev, 4),
            "max": round(self.max, 4),
            "overThreshold": self.over_threshold,
            "limitOversubscribed": self.limit_oversubscribed,
            "nodes": self.nodes,
            "thresholds": self.thresholds,
        }


def reported_resources(snapshot: Snapshot, pods: Iterable[Pod]) -> list[str]:
    """cpu, memory, and every extended resource a workload pod requests that some node has."""
    extra: set[str] = set()
    for pod in pods:
        extra.update(name for name in pod.requests if is_scalar_resource(name))
    present = [
        name
        for name in sorted(extra)
        if name in snapshot.resource_index
        and snapshot.allocatable[:, snapshot.resource_index[name]].any()
    ]
    return [*BASE_RESOURCES, *present]


def utilization(
    engine: Engine, snapshot: Snapshot, now: datetime, resources: list[str]
) -> dict[str, ResourceUtilization]:
    over = over_threshold(engine, snapshot, now)
    levels = threshold_levels(engine, snapshot, now)
    oversubscribed = limit_oversubscription(engine, snapshot, resources)
    out = {}
    for name in resources:
        column = snapshot.resource_index.get(name)
        if column is None:
            continue
        allocatable = snapshot.allocatable[:, column]
        has = allocatable > 0
        ratio = snapshot.requested[has, column] / allocatable[has]
        empty = not len(ratio)
        out[name] = ResourceUtilization(
            mean=0.0 if empty else float(ratio.mean()),
            stddev=0.0 if empty else float(ratio.std()),
            max=0.0 if empty else float(ratio.max()),
            nodes=int(has.sum()),
            over_threshold=None if over is None else over.get(name),
            limit_oversubscribed=oversubscribed[name],
            thresholds=None if levels is None else levels.get(name),
        )
    return out


DISTRIBUTION_BAND = 10  # percent per band of :func:`requested_distribution`


def requested_distribution(snapshot: Snapshot, resource: str) -> list[int]:
    """Nodes per 10% band of requested / allocatable ``resource`` (``[0, 10)`` … ``[90, 100)``,
    then one band for 100% and above), over the nodes that have the resource."""
    column = snapshot.resource_index[resource]
    allocatable = snapshot.allocatable[:, column]
    has = allocatable > 0
    percent = snapshot.requested[has, column] / allocatable[has] * 100.0
    bands = 100 // DISTRIBUTION_BAND
    index = np.minimum(percent // DISTRIBUTION_BAND, bands).astype(np.int64)
    return [int(n) for n in np.bincount(index, minlength=bands + 1)]


def _loadaware(engine: Engine) -> LoadAwareScheduling | None:
    """The first profile's LoadAwareScheduling, if any profile enables it."""
    return next(
        (
            p
            for f in engine.frameworks.values()
            if isinstance(p := f.instances.get(PLUGIN_NAME), LoadAwareScheduling)
        ),
        None,
    )


def over_threshold(engine: Engine, snapshot: Snapshot, now: datetime) -> dict[str, int] | None:
    """Nodes above their LoadAwareScheduling usage threshold, per resource (None without it).

    Uses the first profile that enables the plugin; non-prod thresholds; nodes without a fresh
    NodeMetric are not load-aware and never count.
    """
    plugin = _loadaware(engine)
    if plugin is None:
        return None
    state = state_at(plugin, snapshot, now)
    plan = filter_plan(state, pod_is_prod=False)
    nothing = adds_nothing(state)
    fresh = plan.candidates & state.metrics.has_info & ~expired_nodes(plugin.config, state, now)
    ratio = estimated_usage(state, plan, nothing) / state.allocatable_float * 100.0
    over = plan.checked_limits & exceeds(ratio, plan.bounds) & fresh
    return {name: int(over[k].sum()) for k, name in enumerate(state.resources)}


def threshold_levels(
    engine: Engine, snapshot: Snapshot, now: datetime
) -> dict[str, dict[str, int]] | None:
    """Per resource, how many load-aware nodes have each non-prod threshold (percent, as
    text), as :func:`over_threshold` counts against them; None without the plugin."""
    plugin = _loadaware(engine)
    if plugin is None:
        return None
    state = state_at(plugin, snapshot, now)
    plan = filter_plan(state, pod_is_prod=False)
    out = {}
    for k, name in enumerate(state.resources):
        values, counts = np.unique(plan.limits[k][plan.candidates], return_counts=True)
        out[name] = {str(int(v)): int(c) for v, c in zip(values, counts, strict=True)}
    return out


def limit_oversubscription(
    engine: Engine, snapshot: Snapshot, resources: list[str]
) -> dict[str, int]:
    """Nodes whose summed pod limits exceed allocatable, per resource."""
    plugin = next(
        (
            p
            for f in engine.frameworks.values()
            if isinstance(p := f.instances.get(LIMIT_AWARE), LimitAware)
        ),
        None,
    )
    totals = plugin.totals(snapshot) if plugin is not None else LimitTotals(snapshot)
    out = {}
    for name in resources:
        column = snapshot.resource_index.get(name)
        if column is None:
            out[name] = 0
            continue
        allocatable = snapshot.allocatable[:, column]
        out[name] = int(((totals.column(RAW, name) > allocatable) & (allocatable > 0)).sum())
    return out
