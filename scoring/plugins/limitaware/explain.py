"""Per-node detail behind LimitAware: limits against allocatable, before and after the pod.

For every weighted resource (and every resource the Filter checks) the node's ratio entry, its
limit capacity, the limits already on it, the pod's limit, and the limit/allocatable ratio
before and after placing the pod. Scores use the "non-zero" limits (100m cpu / 200Mi memory for
a missing key); Filter uses plain limits, shown under ``filter``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from scoring.framework import MAX_NODE_SCORE, Cycle
from scoring.goint import quo
from scoring.plugins.limitaware.limits import (
    BASE_RESOURCES,
    NON_ZERO,
    RAW,
    LimitTotals,
    PodLimits,
)
from scoring.plugins.limitaware.ratio import NodeRatios
from scoring.snapshot import IntArray, Snapshot


class LimitAware(Protocol):
    """What the explanation reads of the plugin (``plugin.LimitAware``, which calls it)."""

    weights: dict[str, int]

    def totals(self, snapshot: Snapshot) -> LimitTotals: ...
    def ratios(self, snapshot: Snapshot) -> NodeRatios: ...
    def pod_limits(self, cycle: Cycle) -> PodLimits: ...


Columns = dict[str, tuple[IntArray, ...]]
COLUMNS = "LimitAware/explain-columns"


def _columns(plugin: LimitAware, cycle: Cycle) -> Columns:
    """Per resource, whole-cluster arrays built once per cycle: (listed, capacity, allocatable,
    non-zero node limits, plain node limits)."""
    cached: Columns | None = cycle.state.get(COLUMNS)
    if cached is not None:
        return cached
    snapshot = cycle.snapshot
    ratios, totals = plugin.ratios(snapshot), plugin.totals(snapshot)
    names = sorted({*plugin.weights, *BASE_RESOURCES, *plugin.pod_limits(cycle).scalars})
    zeros = np.zeros(len(snapshot), dtype=np.int64)
    columns: Columns = {}
    for name in names:
        listed, capacity = ratios.capacity(name)
        index = snapshot.resource_index.get(name)
        allocatable = snapshot.allocatable[:, index] if index is not None else zeros
        columns[name] = (
            listed.astype(np.int64),
            capacity,
            allocatable,
            totals.column(NON_ZERO, name),
            totals.column(RAW, name),
        )
    cycle.state[COLUMNS] = columns
    return columns


def explain_node(plugin: LimitAware, cycle: Cycle, node: int) -> dict[str, Any]:
    ratios = plugin.ratios(cycle.snapshot)
    ratio = ratios.ratio_of(node)
    out: dict[str, Any] = {
        "ratio": {"source": ratio.source, "percentOfAllocatable": dict(ratio.values)},
    }
    problem = ratios.errors[node]
    if problem:
        out["error"] = problem
        return out
    limits = plugin.pod_limits(cycle)
    rows = {}
    for name, arrays in _columns(plugin, cycle).items():
        listed, capacity, allocatable, before, plain = (int(a[node]) for a in arrays)
        after = before + limits.non_zero.get(name, 0)
        row: dict[str, Any] = {
            "limited": bool(listed),
            "allocatable": allocatable,
            "limitCapacity": capacity,
            "nodeLimits": before,
            "podLimit": limits.non_zero.get(name, 0),
            "limitToAllocatable": _ratios(before, after, allocatable),
            "filter": {"nodeLimits": plain, "podLimit": limits.raw.get(name, 0)},
        }
        if name in plugin.weights:
            row["weight"] = plugin.weights[name]
            if listed and capacity:
                row["score"] = quo((capacity - after) * MAX_NODE_SCORE, capacity)
        rows[name] = row
    out["resources"] = rows
    return out


def _ratios(before: int, after: int, allocatable: int) -> Mapping[str, float | None]:
    if allocatable == 0:
        return {"before": None, "after": None}
    return {"before": round(before / allocatable, 4), "after": round(after / allocatable, 4)}
