"""NodeResourcesFit and NodeResourcesBalancedAllocation (in-tree, Kubernetes 1.35 semantics).

Upstream: pkg/scheduler/framework/plugins/noderesources/{fit.go, resource_allocation.go,
least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go, balanced_allocation.go}
and plugins/helper/shape_score.go. Arithmetic is int64 with Go's truncating division.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from scoring.columnar.values import Bools, Ints, Lists, Plain, Records, Table, Values
from scoring.framework import (
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    Cycle,
    FilterResult,
    Plugin,
    Status,
    unresolvable,
    unschedulable,
)
from scoring.goint import quo_array
from scoring.objects import Pod
from scoring.snapshot import NODE_EVENT, POD_EVENT, BoolArray, IntArray, Snapshot

DEFAULT_RESOURCES: tuple[Mapping[str, Any], ...] = (
    {"name": "cpu", "weight": 1},
    {"name": "memory", "weight": 1},
)
_NATIVE_CHECKED = ("cpu", "memory", "ephemeral-storage")
MAX_UTILIZATION = 100
# Up to this many nodes, per-node Python is cheaper than setting up arrays (cache recomputation).
FEW_NODES = 8
MAX_CUSTOM_PRIORITY_SCORE = 10
_EXPLAIN_KEY = "NodeResourcesFit/explainScore"


def is_scalar_resource(name: str) -> bool:
    """``schedutil.IsScalarResourceName``: extended, hugepages, prefixed-native, attachable."""
    return "/" in name or name.startswith(("hugepages-", "attachable-volumes-"))


def is_extended_resource(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``: domain-prefixed, outside kubernetes.io."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


# -- requests as the scorers see them -----------------------------------------------------------


def pod_score_request(pod: Pod, name: str, *, use_requested: bool) -> int:
    """``calculatePodResourceRequest``: non-zero cpu/memory unless ``use_requested``."""
    if not use_requested and name == "cpu":
        return pod.non_zero_requests[0]
    if not use_requested and name == "memory":
        return pod.non_zero_requests[1]
    return pod.requests.get(name, 0)


def allocatable_and_requested(
    snapshot: Snapshot, pod: Pod, name: str, nodes: IntArray, *, use_requested: bool
) -> tuple[IntArray, IntArray]:
    """``calculateResourceAllocatableRequest`` for ``nodes``: (allocatable, requested + pod).

    A scalar resource the pod does not request, or an unknown non-scalar name, yields zeros so
    the scorer skips it ("bypass").
    """
    request = pod_score_request(pod, name, use_requested=use_requested)
    column = _scored_column(snapshot, name, request)
    if column is None:
        zeros = np.zeros(len(nodes), dtype=np.int64)
        return zeros, zeros
    used = _used(snapshot, name, column, use_requested=use_requested)
    return snapshot.allocatable[nodes, column], used[nodes] + request


def _scored_column(snapshot: Snapshot, name: str, request: int) -> int | None:
    """The resource's column, or None when the scorers bypass it."""
    known = name in _NATIVE_CHECKED or is_scalar_resource(name)
    if not known or (request == 0 and is_scalar_resource(name)):
        return None
    return snapshot.resource_index.get(name)


def _used(snapshot: Snapshot, name: str, column: int, *, use_requested: bool) -> IntArray:
    """What the node's pods request of the resource, per node (non-zero cpu/memory unless
    ``use_requested``)."""
    if not use_requested and name in ("cpu", "memory"):
        result: IntArray = snapshot.non_zero_requested[:, 0 if name == "cpu" else 1]
    else:
        result = snapshot.requested[:, column]
    return result


def resource_rows(
    cycle: Cycle, resources: Sequence[Mapping[str, Any]], node: int, *, use_requested: bool
) -> tuple[list[int], list[int]]:
    """One node's row of :func:`resource_matrix` as Python ints (cheaper for a few nodes)."""
    snapshot = cycle.snapshot
    allocatable, requested = [], []
    for resource in resources:
        name = str(resource["name"])
        request = pod_score_request(cycle.pod, name, use_requested=use_requested)
        column = _scored_column(snapshot, name, request)
        if column is None:
            allocatable.append(0)
            requested.append(0)
            continue
        allocatable.append(int(snapshot.allocatable[node, column]))
        used = _used(snapshot, name, column, use_requested=use_requested)
        requested.append(int(used[node]) + request)
    return allocatable, requested


def resource_matrix(
    cycle: Cycle, resources: Sequence[Mapping[str, Any]], nodes: IntArray, *, use_requested: bool
) -> tuple[IntArray, IntArray]:
    """(allocatable, requested) as nodes × configured-resources matrices."""
    pairs = [
        allocatable_and_requested(
            cycle.snapshot, cycle.pod, str(r["name"]), nodes, use_requested=use_requested
        )
        for r in resources
    ]
    if not pairs:
        empty = np.zeros((len(nodes), 0), dtype=np.int64)
        return empty, empty
    return np.stack([a for a, _ in pairs], axis=1), np.stack([q for _, q in pairs], axis=1)


# -- scoring strategies --------------------------------------------------------------------------


def _weighted_average(per_resource: IntArray, include: BoolArray, weights: IntArray) -> IntArray:
    node_score = (per_resource * weights * include).sum(axis=1)
    weight_sum = (weights * include).sum(axis=1)
    safe = np.where(weight_sum == 0, 1, weight_sum)
    return np.where(weight_sum == 0, 0, quo_array(node_score, safe))


def least_allocated(requested: IntArray, allocatable: IntArray, weights: IntArray) -> IntArray:
    """``leastResourceScorer``: (cap - req) * 100 / cap, 0 when the request exceeds capacity."""
    safe = np.where(allocatable == 0, 1, allocatable)
    score = np.where(requested > allocatable, 0, (allocatable - requested) * MAX_NODE_SCORE // safe)
    return _weighted_average(score, allocatable != 0, weights)


def least_allocated_one(requested: list[int], allocatable: list[int], weights: list[int]) -> int:
    """:func:`least_allocated` of one node, in Python ints."""
    scores = [
        0 if q > a else (a - q) * MAX_NODE_SCORE // a if a else 0
        for q, a in zip(requested, allocatable, strict=True)
    ]
    return _weighted_average_one(scores, allocatable, weights)


def most_allocated_one(requested: list[int], allocatable: list[int], weights: list[int]) -> int:
    """:func:`most_allocated` of one node, in Python ints."""
    scores = [
        min(q, a) * MAX_NODE_SCORE // a if a else 0
        for q, a in zip(requested, allocatable, strict=True)
    ]
    return _weighted_average_one(scores, allocatable, weights)


def _weighted_average_one(scores: list[int], allocatable: list[int], weights: list[int]) -> int:
    total = weight_sum = 0
    for score, a, w in zip(scores, allocatable, weights, strict=True):
        if a:
            total += score * w
            weight_sum += w
    if weight_sum == 0:
        return 0
    quotient = abs(total) // weight_sum  # Go division truncates toward zero
    return -quotient if total < 0 else quotient


def most_allocated(requested: IntArray, allocatable: IntArray, weights: IntArray) -> IntArray:
    """``mostResourceScorer``: the request is clamped to capacity, then req * 100 / cap."""
    safe = np.where(allocatable == 0, 1, allocatable)
    score = np.minimum(requested, allocatable) * MAX_NODE_SCORE // safe
    return _weighted_average(score, allocatable != 0, weights)


def broken_linear(shape: Sequence[tuple[int, int]], utilization: IntArray) -> IntArray:
    """``helper.BuildBrokenLinearFunction`` applied element-wise."""
    result = np.full_like(utilization, shape[-1][1])
    done = np.zeros(utilization.shape, dtype=bool)
    for i, (point, score) in enumerate(shape):
        here = ~done & (utilization <= point)
        if i == 0:
            value = np.full_like(utilization, score)
        else:
            prev_point, prev_score = shape[i - 1]
            value = prev_score + quo_array(
                (score - prev_score) * (utilization - prev_point), point - prev_point
            )
        result = np.where(here, value, result)
        done |= here
    return result


def capacity_utilization(requested: IntArray, allocatable: IntArray) -> IntArray:
    """RequestedToCapacityRatio's utilization: ``requested * 100 / allocatable`` truncated,
    100 when over allocatable or with nothing allocatable."""
    safe = np.where(allocatable == 0, 1, allocatable)
    over = (allocatable == 0) | (requested > allocatable)
    return np.where(over, MAX_UTILIZATION, requested * MAX_UTILIZATION // safe)


def requested_to_capacity_ratio(
    requested: IntArray,
    allocatable: IntArray,
    weights: IntArray,
    shape: Sequence[Mapping[str, Any]],
) -> IntArray:
    """``buildRequestedToCapacityRatioScorerFunction``: only resources scoring > 0 count."""
    points = [
        (int(p["utilization"]), int(p["score"]) * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE))
        for p in shape
    ]
    utilization = capacity_utilization(requested, allocatable)
    score = broken_linear(points, utilization)
    include = (allocatable != 0) & (score > 0)
    node_score = (score * weights * include).sum(axis=1)
    weight_sum = (weights * include).sum(axis=1)
    ratio = node_score / np.where(weight_sum == 0, 1, weight_sum)
    rounded = np.sign(ratio) * np.floor(np.abs(ratio) + 0.5)  # math.Round: half away from zero
    return np.where(weight_sum == 0, 0, rounded).astype(np.int64)


def balanced_score(requested: IntArray, allocatable: IntArray) -> IntArray:
    """``balancedResourceScorer`` (1.35): 100 * (1 - std of min(req/alloc, 1))."""
    n_nodes, n_resources = requested.shape
    fractions = []
    present = allocatable != 0
    safe = np.where(present, allocatable, 1)
    for k in range(n_resources):
        fractions.append(np.minimum(requested[:, k] / safe[:, k], 1.0))
    count = present.sum(axis=1)
    total = np.zeros(n_nodes)
    for k in range(n_resources):  # sequential, as Go sums
        total = total + np.where(present[:, k], fractions[k], 0.0)
    mean = total / np.where(count == 0, 1, count)
    squares = np.zeros(n_nodes)
    for k in range(n_resources):
        squares = squares + np.where(present[:, k], (fractions[k] - mean) ** 2, 0.0)
    std_many = np.sqrt(squares / np.where(count == 0, 1, count))
    std_two = _two_resource_std(fractions, present)
    std = np.where(count == 2, std_two, np.where(count > 2, std_many, 0.0))
    result: IntArray = np.trunc((1 - std) * MAX_NODE_SCORE).astype(np.int64)
    return result


def _balanced_one(requested: list[int], allocatable: list[int]) -> int:
    """:func:`balanced_score` of one node, in the same float64 operations and order."""
    fractions = [
        min(float(r) / float(a), 1.0) for r, a in zip(requested, allocatable, strict=True) if a
    ]
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        total = 0.0
        for fraction in fractions:
            total += fraction
        mean = total / len(fractions)
        squares = 0.0
        for fraction in fractions:
            squares += (fraction - mean) * (fraction - mean)
        std = math.sqrt(squares / len(fractions))
    else:
        std = 0.0
    return math.trunc((1 - std) * MAX_NODE_SCORE)


def _two_resource_std(fractions: list[Any], present: BoolArray) -> Any:
    """|f1 - f2| / 2 over the first two present resources of each node."""
    n_nodes = present.shape[0]
    first = np.full(n_nodes, np.nan)
    second = np.full(n_nodes, np.nan)
    for k, fraction in enumerate(fractions):
        take_first = present[:, k] & np.isnan(first)
        take_second = present[:, k] & ~take_first & np.isnan(second)
        first = np.where(take_first, fraction, first)
        second = np.where(take_second, fraction, second)
    return np.abs((first - second) / 2)


# -- the plugins -----------------------------------------------------------------------------------


_ONE_NODE_STRATEGIES = {"LeastAllocated": least_allocated_one, "MostAllocated": most_allocated_one}


def _scoring_strategy(args: Mapping[str, Any]) -> Mapping[str, Any]:
    strategy: Mapping[str, Any] = args.get("scoringStrategy") or {}
    return strategy


def _numbers(array: Any) -> Values:
    """An array's values as a column (integers unless the array holds other numbers)."""
    return Ints(array) if array.dtype.kind in "iu" else Plain(array.tolist())


class NodeResourcesFit(Plugin):
    """Filter on free allocatable; score by LeastAllocated / MostAllocated / RTCR."""

    name = "NodeResourcesFit"
    points = frozenset({"preFilter", "filter", "preScore", "score"})
    depends_on = frozenset({POD_EVENT, NODE_EVENT})

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__(args)
        strategy = _scoring_strategy(args)
        self.strategy = str(strategy.get("type") or "LeastAllocated")
        self.resources = tuple(strategy.get("resources") or DEFAULT_RESOURCES)
        self.weights = np.array([int(r.get("weight") or 1) for r in self.resources], np.int64)
        self.shape = tuple((strategy.get("requestedToCapacityRatio") or {}).get("shape") or ())
        self.ignored = frozenset(args.get("ignoredResources") or ())
        self.ignored_groups = frozenset(args.get("ignoredResourceGroups") or ())

    def _ignored(self, name: str) -> bool:
        if not is_extended_resource(name):
            return False
        return name in self.ignored or name.split("/")[0] in self.ignored_groups

    def _checked_resources(self, cycle: Cycle) -> list[str]:
        requests = cycle.pod.requests
        scalars = sorted(
            n
            for n, q in requests.items()
            if q > 0 and is_scalar_resource(n) and not self._ignored(n)
        )
        return [n for n in _NATIVE_CHECKED if requests.get(n, 0) > 0] + scalars

    def filter(self, cycle: Cycle) -> FilterResult:
        return self._fits(cycle, slice(None), len(cycle.snapshot))

    def filter_nodes(self, cycle: Cycle, nodes: IntArray) -> FilterResult:
        if len(nodes) <= FEW_NODES:  # a cache recomputing a few nodes: no array set-up
            return FilterResult.from_statuses(self._fits_node(cycle, int(i)) for i in nodes)
        return self._fits(cycle, nodes, len(nodes))

    def _fits_node(self, cycle: Cycle, node: int) -> Status:
        """:meth:`_fits` on one node, in Python ints."""
        snap = cycle.snapshot
        pods_column = snap.resource_index["pods"]
        reasons = []
        if snap.requested[node, pods_column] + 1 > snap.allocatable[node, pods_column]:
            reasons.append("Too many pods")
        hopeless = False
        for name in self._checked_resources(cycle):
            column = snap.resource_index[name]
            want = int(cycle.request[column])
            allocatable = int(snap.allocatable[node, column])
            if want > allocatable - int(snap.requested[node, column]):
                reasons.append(f"Insufficient {name}")
                hopeless = hopeless or want > allocatable
        if not reasons:
            return SUCCESS
        return unresolvable(*reasons) if hopeless else unschedulable(*reasons)

    def _fits(self, cycle: Cycle, rows: slice | IntArray, n: int) -> FilterResult:
        """``fitsRequest`` on the ``rows`` nodes: every insufficient resource is reported, in
        upstream order."""
        snap = cycle.snapshot
        pods_column = snap.resource_index["pods"]
        checks: list[tuple[str, BoolArray, BoolArray]] = []
        too_many = snap.requested[rows, pods_column] + 1 > snap.allocatable[rows, pods_column]
        checks.append(("Too many pods", too_many, np.zeros(n, dtype=bool)))
        for name in self._checked_resources(cycle):
            column = snap.resource_index[name]
            want = int(cycle.request[column])
            allocatable = snap.allocatable[rows, column]
            free = allocatable - snap.requested[rows, column]
            checks.append((f"Insufficient {name}", want > free, want > allocatable))
        return _combine_reasons(n, checks)

    def score(self, cycle: Cycle, feasible: IntArray) -> IntArray:
        one = _ONE_NODE_STRATEGIES.get(self.strategy)
        if one is not None and len(feasible) <= FEW_NODES:  # a cache recomputing a few nodes
            weights = self.weights.tolist()
            rows = (resource_rows(cycle, self.resources, n, use_requested=False) for n in feasible)
            return np.array([one(q, a, weights) for a, q in rows], dtype=np.int64)
        allocatable, requested = resource_matrix(
            cycle, self.resources, feasible, use_requested=False
        )
        if self.strategy == "MostAllocated":
            return most_allocated(requested, allocatable, self.weights)
        if self.strategy == "RequestedToCapacityRatio":
            return requested_to_capacity_ratio(requested, allocatable, self.weights, self.shape)
        return least_allocated(requested, allocatable, self.weights)

    def explain(self, cycle: Cycle, node: int) -> Mapping[str, Any]:
        """Per resource: what the filter compares, and for cpu/memory the non-zero amounts the
        score uses instead (request-less containers at 100m / 200Mi, node and pod alike)."""
        snap = cycle.snapshot
        rows: dict[str, dict[str, int]] = {}
        for name in dict.fromkeys([*_NATIVE_CHECKED, "pods", *self._checked_resources(cycle)]):
            column = snap.resource_index.get(name)
            if column is None:
                continue
            rows[name] = {
                "allocatable": int(snap.allocatable[node, column]),
                "requested": int(snap.requested[node, column]),
                "pod": 1 if name == "pods" else int(cycle.request[column]),
            }
        for k, name in enumerate(("cpu", "memory")):
            rows[name]["scoredRequested"] = int(snap.non_zero_requested[node, k])
            rows[name]["scoredPod"] = cycle.pod.non_zero_requests[k]
        detail: dict[str, Any] = {
            "strategy": self.strategy,
            "resources": rows,
            "scored": self._explain_score(cycle, node),
        }
        if self.strategy == "RequestedToCapacityRatio":
            detail["shape"] = [
                {"utilization": int(p["utilization"]), "score": int(p["score"])} for p in self.shape
            ]
        return detail

    def explain_columns(self, cycle: Cycle, nodes: IntArray) -> Values:
        """:meth:`explain` of each of ``nodes``, from the snapshot's arrays."""
        snap = cycle.snapshot
        count = len(nodes)
        rows: dict[str, Values] = {}
        for name in dict.fromkeys([*_NATIVE_CHECKED, "pods", *self._checked_resources(cycle)]):
            column = snap.resource_index.get(name)
            if column is None:
                continue
            keys: tuple[str, ...] = ("allocatable", "requested", "pod")
            fields: dict[str, Values] = {
                "allocatable": Ints(snap.allocatable[nodes, column]),
                "requested": Ints(snap.requested[nodes, column]),
                "pod": Table.constant(1 if name == "pods" else int(cycle.request[column]), count),
            }
            if name in ("cpu", "memory"):
                k = ("cpu", "memory").index(name)
                keys = (*keys, "scoredRequested", "scoredPod")
                fields["scoredRequested"] = Ints(snap.non_zero_requested[nodes, k])
                fields["scoredPod"] = Table.constant(cycle.pod.non_zero_requests[k], count)
            rows[name] = Records(count, [keys], None, fields)
        detail: dict[str, Values] = {
            "strategy": Table.constant(self.strategy, count),
            "resources": Records(count, [tuple(rows)], None, rows),
            "scored": self._score_columns(cycle, nodes),
        }
        if self.strategy == "RequestedToCapacityRatio":
            shape = [
                {"utilization": int(p["utilization"]), "score": int(p["score"])} for p in self.shape
            ]
            detail["shape"] = Table.constant(shape, count)
        return Records(count, [tuple(detail)], None, detail)

    def _score_columns(self, cycle: Cycle, nodes: IntArray) -> Lists:
        """:meth:`_explain_score` of each of ``nodes``, one column per configured resource."""
        count = len(nodes)
        allocatable, requested, scores = self._score_arrays(cycle)
        ratio = self.strategy == "RequestedToCapacityRatio"
        positions: list[Values] = []
        for k, (resource, weight) in enumerate(
            zip(self.resources, self.weights.tolist(), strict=True)
        ):
            a, q, score = allocatable[nodes, k], requested[nodes, k], scores[nodes, k]
            fields: dict[str, Values] = {
                "name": Table.constant(str(resource["name"]), count),
                "weight": Table.constant(int(weight), count),
                "allocatable": _numbers(a),
                "requested": _numbers(q),
                "score": _numbers(score),
                "counted": Bools((a != 0) & ((score > 0) | (not ratio))),
            }
            if ratio:
                fields["utilization"] = Ints(capacity_utilization(q, a))
            positions.append(Records(count, [tuple(fields)], None, fields))
        return Lists(np.full(count, len(positions), dtype=np.int64), positions)

    def _explain_score(self, cycle: Cycle, node: int) -> list[dict[str, Any]]:
        """Each configured resource as the strategy scores it on the node: allocatable, the
        requested amount with the pod (zeros: bypassed), its weight and its own score (what the
        weighted average takes; ``counted`` False when the average leaves it out)."""
        arrays = self._score_arrays(cycle)
        allocatable, requested, scores = (rows[node].tolist() for rows in arrays)
        ratio = self.strategy == "RequestedToCapacityRatio"
        out = []
        for k, (resource, weight) in enumerate(
            zip(self.resources, self.weights.tolist(), strict=True)
        ):
            a, q, score = allocatable[k], requested[k], scores[k]
            row = {
                "name": str(resource["name"]),
                "weight": int(weight),
                "allocatable": a,
                "requested": q,
                "score": score,
                "counted": a != 0 and (score > 0 or not ratio),
            }
            if ratio:
                row["utilization"] = int(capacity_utilization(np.array(q), np.array(a)))
            out.append(row)
        return out

    def _score_arrays(self, cycle: Cycle) -> tuple[IntArray, IntArray, Any]:
        """(allocatable, requested, per-resource score) of every node × configured resource,
        computed once per cycle with the strategy's own functions, one resource at a time."""
        key = f"{_EXPLAIN_KEY}/arrays"
        arrays: tuple[IntArray, IntArray, Any] | None = cycle.state.get(key)
        if arrays is None:
            nodes = np.arange(len(cycle.snapshot), dtype=np.int64)
            allocatable, requested = resource_matrix(
                cycle, self.resources, nodes, use_requested=False
            )
            one = np.ones(1, dtype=np.int64)
            columns = []
            for k in range(len(self.resources)):
                q, a = requested[:, k : k + 1], allocatable[:, k : k + 1]
                if self.strategy == "RequestedToCapacityRatio":
                    columns.append(requested_to_capacity_ratio(q, a, one, self.shape))
                elif self.strategy == "MostAllocated":
                    columns.append(most_allocated(q, a, one))
                else:
                    columns.append(least_allocated(q, a, one))
            scores = np.stack(columns, axis=1) if columns else np.zeros((len(nodes), 0), np.int64)
            arrays = (allocatable, requested, scores)
            cycle.state[key] = arrays
        return arrays


def _combine_reasons(n: int, checks: list[tuple[str, BoolArray, BoolArray]]) -> FilterResult:
    """One status per node listing every failed check; unresolvable if any check is."""
    if not checks:
        return FilterResult.success(n)
    if n <= FEW_NODES:  # a cache recomputing a few nodes: plain Python beats array set-up
        return FilterResult.from_statuses(_node_status(checks, i) for i in range(n))
    failed = np.stack([c[1] for c in checks], axis=1)
    hopeless = np.stack([c[2] & c[1] for c in checks], axis=1)
    bits = 1 << np.arange(len(checks), dtype=np.int64)
    key = (failed * bits).sum(axis=1) * 2 + hopeless.any(axis=1)
    ids = np.full(n, -1, dtype=np.int32)
    statuses: list[Status] = []
    for value in np.unique(key[key > 0]):
        mask_bits, any_hopeless = divmod(int(value), 2)
        reasons = tuple(c[0] for i, c in enumerate(checks) if mask_bits >> i & 1)
        ids[key == value] = len(statuses)
        statuses.append(unresolvable(*reasons) if any_hopeless else unschedulable(*reasons))
    return FilterResult(ids, statuses)


def _node_status(checks: list[tuple[str, BoolArray, BoolArray]], node: int) -> Status:
    """:func:`_combine_reasons` for one node."""
    reasons = tuple(name for name, failed, _ in checks if failed[node])
    if not reasons:
        return SUCCESS
    if any(failed[node] and hopeless[node] for _, failed, hopeless in checks):
        return unresolvable(*reasons)
    return unschedulable(*reasons)


class BalancedAllocation(Plugin):
    """NodeResourcesBalancedAllocation: prefer nodes whose resource fractions are even."""

    name = "NodeResourcesBalancedAllocation"
    points = frozenset({"preScore", "score"})
    depends_on = frozenset({POD_EVENT, NODE_EVENT})

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__(args)
        self.resources = tuple(args.get("resources") or DEFAULT_RESOURCES)

    def pre_score(self, cycle: Cycle, feasible: IntArray) -> Status:
        """Skip best-effort pods (kubernetes#129138): they would all pile onto one node."""
        requests = [
            pod_score_request(cycle.pod, str(r["name"]), use_requested=True) for r in self.resources
        ]
        return SKIP if all(q == 0 for q in requests) else SUCCESS

    def score(self, cycle: Cycle, feasible: IntArray) -> IntArray:
        if len(feasible) <= FEW_NODES:  # a cache recomputing a few nodes
            rows = (resource_rows(cycle, self.resources, n, use_requested=True) for n in feasible)
            return np.array([_balanced_one(q, a) for a, q in rows], dtype=np.int64)
        allocatable, requested = resource_matrix(
            cycle, self.resources, feasible, use_requested=True
        )
        return balanced_score(requested, allocatable)
