"""Per-node detail behind LimitAware: limits against allocatable, before and after the pod.

For every weighted resource (and every resource the Filter checks) the node's ratio entry, its
limit capacity, the limits already on it, the pod's limit, and the limit/allocatable ratio
before and after placing the pod. Scores use the "non-zero" limits (100m cpu / 200Mi memory for
a missing key); Filter uses plain limits, shown under ``filter``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scoring.framework import MAX_NODE_SCORE, Cycle
from scoring.plugins.limitaware.limits import BASE_RESOURCES, NON_ZERO, RAW

if TYPE_CHECKING:
    from scoring.plugins.limitaware.plugin import LimitAware


def explain_node(plugin: LimitAware, cycle: Cycle, node: int) -> dict[str, Any]:
    snapshot = cycle.snapshot
    ratios = plugin.ratios(snapshot)
    ratio = ratios.ratio_of(node)
    out: dict[str, Any] = {
        "ratio": {"source": ratio.source, "percentOfAllocatable": dict(ratio.values)},
    }
    problem = ratios.errors[node]
    if problem:
        out["error"] = problem
        return out
    limits = plugin.pod_limits(cycle)
    totals = plugin.totals(snapshot)
    names = sorted({*plugin.weights, *BASE_RESOURCES, *limits.scalars})
    rows = {}
    for name in names:
        listed, capacity = (int(a[node]) for a in ratios.capacity(name))
        column = snapshot.resource_index.get(name)
        allocatable = int(snapshot.allocatable[node, column]) if column is not None else 0
        before = int(totals.column(NON_ZERO, name)[node])
        after = before + limits.non_zero.get(name, 0)
        row: dict[str, Any] = {
            "limited": bool(listed),
            "allocatable": allocatable,
            "limitCapacity": capacity,
            "nodeLimits": before,
            "podLimit": limits.non_zero.get(name, 0),
            "limitToAllocatable": _ratios(before, after, allocatable),
            "filter": {
                "nodeLimits": int(totals.column(RAW, name)[node]),
                "podLimit": limits.raw.get(name, 0),
            },
        }
        if name in plugin.weights:
            row["weight"] = plugin.weights[name]
            if listed and capacity:
                row["score"] = _go_trunc((capacity - after) * MAX_NODE_SCORE, capacity)
        rows[name] = row
    out["resources"] = rows
    return out


def _ratios(before: int, after: int, allocatable: int) -> Mapping[str, float | None]:
    if allocatable == 0:
        return {"before": None, "after": None}
    return {"before": round(before / allocatable, 4), "after": round(after / allocatable, 4)}


def _go_trunc(numerator: int, denominator: int) -> int:
    quotient = abs(numerator) // abs(denominator)
    return -quotient if (numerator < 0) != (denominator < 0) else quotient
