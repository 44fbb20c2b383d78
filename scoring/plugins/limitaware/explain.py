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

from scoring.columnar.values import Bools, Floats, Interleave, Ints, Plain, Records, Table, Values
from scoring.framework import MAX_NODE_SCORE, Cycle
from scoring.goint import quo, quo_array
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


_ROW_KEYS = (
    "limited",
    "allocatable",
    "limitCapacity",
    "nodeLimits",
    "podLimit",
    "limitToAllocatable",
    "filter",
)


def explain_columns(plugin: LimitAware, cycle: Cycle, nodes: IntArray) -> Values:
    """:func:`explain_node` of each of ``nodes`` as one column: nodes whose ratio is usable
    together, the others node by node."""
    ratios = plugin.ratios(cycle.snapshot)
    troubled = np.array([bool(ratios.errors[i]) for i in nodes.tolist()], dtype=bool)
    usual = np.flatnonzero(~troubled)
    rest = np.flatnonzero(troubled)
    return Interleave(
        len(nodes),
        [
            (usual, _usual_columns(plugin, cycle, nodes[usual])),
            (rest, Plain([explain_node(plugin, cycle, i) for i in nodes[rest].tolist()])),
        ],
    )


def _usual_columns(plugin: LimitAware, cycle: Cycle, nodes: IntArray) -> Values:
    ratios = plugin.ratios(cycle.snapshot)
    count = len(nodes)
    table = [{"source": r.source, "percentOfAllocatable": dict(r.values)} for r in ratios.ratios]
    limits = plugin.pod_limits(cycle)
    resources: dict[str, Values] = {}
    for name, arrays in _columns(plugin, cycle).items():
        listed, capacity, allocatable, before, plain = (a[nodes].astype(np.int64) for a in arrays)
        pod_limit = limits.non_zero.get(name, 0)
        after = before + pod_limit
        filters: dict[str, Values] = {
            "nodeLimits": Ints(plain),
            "podLimit": Table.constant(limits.raw.get(name, 0), count),
        }
        fields: dict[str, Values] = {
            "limited": Bools(listed != 0),
            "allocatable": Ints(allocatable),
            "limitCapacity": Ints(capacity),
            "nodeLimits": Ints(before),
            "podLimit": Table.constant(pod_limit, count),
            "limitToAllocatable": _ratio_columns(before, after, allocatable),
            "filter": Records(count, [("nodeLimits", "podLimit")], None, filters),
        }
        shapes: list[tuple[str, ...]] = [_ROW_KEYS]
        codes = None
        if name in plugin.weights:
            fields["weight"] = Table.constant(plugin.weights[name], count)
            scored = (listed != 0) & (capacity != 0)
            safe = np.where(scored, capacity, 1)
            fields["score"] = Ints(quo_array((safe - after) * MAX_NODE_SCORE, safe)[scored])
            shapes = [(*_ROW_KEYS, "weight"), (*_ROW_KEYS, "weight", "score")]
            codes = scored.astype(np.int64)
        resources[name] = Records(count, shapes, codes, fields)
    names = tuple(resources)
    columns: dict[str, Values] = {
        "ratio": Table(ratios.ids[nodes], table),
        "resources": Records(count, [names], None, resources),
    }
    return Records(count, [("ratio", "resources")], None, columns)


def _ratio_columns(before: IntArray, after: IntArray, allocatable: IntArray) -> Values:
    """``_ratios`` of each node (Python's ``round`` to 4 places, value by value)."""
    has = allocatable != 0
    rows = zip(before[has].tolist(), after[has].tolist(), allocatable[has].tolist(), strict=True)
    pairs = [(round(b / a, 4), round(c / a, 4)) for b, c, a in rows]
    present = Records(
        int(has.sum()),
        [("before", "after")],
        None,
        {
            "before": Floats(np.array([p[0] for p in pairs], dtype=np.float64)),
            "after": Floats(np.array([p[1] for p in pairs], dtype=np.float64)),
        },
    )
    nulls = Table.constant({"before": None, "after": None}, int(len(has) - has.sum()))
    return Interleave(len(has), [(np.flatnonzero(has), present), (np.flatnonzero(~has), nulls)])
