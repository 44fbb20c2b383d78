"""Resource scoring as kube-scheduler 1.20 does it, for targets before Kubernetes 1.22.

Upstream at v1.20.2: ``pkg/scheduler/framework/plugins/noderesources/{resource_allocation.go,
least_allocated.go, most_allocated.go, requested_to_capacity_ratio.go, balanced_allocation.go}``.
What differs from the 1.35 scorers in :mod:`scoring.plugins.noderesources`:

- requests: cpu and memory are the non-zero amounts (100m / 200Mi for a container without the
  key, ``schedutil.GetNonzeroRequestForResource``) on the node and for the pod, for every scorer,
  the balanced one included (it uses actual requests since kubernetes PR #105845, 1.23, picked
  into 1.22 by #106081); a scalar resource the pod does not request is still scored (1.35 skips
  it);
- overcommitted resources (kubernetes PR #102925, 1.22: "Fix scoring for
  NodeResourcesMostAllocated and NodeResourcesBalancedAllocation plugins when nodes have
  containers with no requests"): MostAllocated scores a resource whose request exceeds what is
  allocatable 0 (1.22+ clamps the request, scoring 100), BalancedAllocation the whole node 0
  (1.22+ caps each fraction at 1); LeastAllocated scores it 0 in both;
- NodeResourcesLeastAllocated / NodeResourcesMostAllocated: the weighted average divides by the
  weight of every configured resource, including those with nothing allocatable (1.35 leaves
  them out);
- RequestedToCapacityRatio: utilization is ``100 - (capacity - requested) * 100 / capacity``
  (rounding the used share up where 1.35 truncates ``requested * 100 / capacity``);
- NodeResourcesBalancedAllocation: cpu and memory only, args ignored (other resources since
  kubernetes PR #101946, 1.22); 0 when either fraction (``requested / allocatable``, 1 when
  nothing is allocatable) is at least 1, else ``int64((1 - |cpuFraction - memoryFraction|) *
  100)`` (1.35: one minus the standard deviation of the capped fractions, i.e. half the
  difference for two resources); no PreScore, so best-effort pods are scored too.

These are v1.20.2's. kubernetes#105220 says #102925 was also picked into later 1.20 and 1.21
patch releases; targets name a minor only, so those patches are not told apart.

Each plugin keeps its own name (``NodeResourcesLeastAllocated``, ...) in decisions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from scoring.framework import MAX_NODE_SCORE, Cycle, Plugin
from scoring.plugins.noderesources import (
    DEFAULT_RESOURCES,
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_UTILIZATION,
    NodeResourcesFit,
    broken_linear,
    is_scalar_resource,
)
from scoring.snapshot import NODE_EVENT, POD_EVENT, IntArray

SEMANTICS = "kube-scheduler 1.20"
_NON_ZERO = {"cpu": 0, "memory": 1}


def allocatable_requested(cycle: Cycle, name: str, nodes: IntArray) -> tuple[IntArray, IntArray]:
    """``calculateResourceAllocatableRequest`` (1.20) on ``nodes``: (allocatable, requested with
    the pod); zeros for a resource that is neither native nor scalar, or that no node has."""
    snapshot = cycle.snapshot
    column = snapshot.resource_index.get(name)
    known = name in _NON_ZERO or name == "ephemeral-storage" or is_scalar_resource(name)
    if column is None or not known:
        zeros = np.zeros(len(nodes), dtype=np.int64)
        return zeros, zeros
    allocatable: IntArray = snapshot.allocatable[nodes, column]
    k = _NON_ZERO.get(name)
    if k is not None:
        used: IntArray = snapshot.non_zero_requested[nodes, k] + cycle.pod.non_zero_requests[k]
    else:
        used = snapshot.requested[nodes, column] + cycle.pod.requests.get(name, 0)
    return allocatable, used


def _matrix(cycle: Cycle, names: Sequence[str], nodes: IntArray) -> tuple[IntArray, IntArray]:
    """(allocatable, requested) as nodes × resources matrices."""
    pairs = [allocatable_requested(cycle, name, nodes) for name in names]
    if not pairs:
        empty = np.zeros((len(nodes), 0), dtype=np.int64)
        return empty, empty
    return np.stack([a for a, _ in pairs], axis=1), np.stack([q for _, q in pairs], axis=1)


def least_requested(requested: IntArray, allocatable: IntArray) -> IntArray:
    """``leastRequestedScore`` (1.20), element-wise."""
    safe = np.where(allocatable == 0, 1, allocatable)
    score = (allocatable - requested) * MAX_NODE_SCORE // safe
    result: IntArray = np.where((allocatable == 0) | (requested > allocatable), 0, score)
    return result


def most_requested(requested: IntArray, allocatable: IntArray) -> IntArray:
    """``mostRequestedScore`` (1.20), element-wise: 0 when over capacity (no clamping)."""
    safe = np.where(allocatable == 0, 1, allocatable)
    score = requested * MAX_NODE_SCORE // safe
    result: IntArray = np.where((allocatable == 0) | (requested > allocatable), 0, score)
    return result


def utilization(requested: IntArray, allocatable: IntArray) -> IntArray:
    """RequestedToCapacityRatio's utilization (1.20): ``100 - (cap - req) * 100 / cap``, 100
    when nothing is allocatable or the request exceeds it."""
    safe = np.where(allocatable == 0, 1, allocatable)
    used = MAX_UTILIZATION - (allocatable - requested) * MAX_UTILIZATION // safe
    over = (allocatable == 0) | (requested > allocatable)
    result: IntArray = np.where(over, MAX_UTILIZATION, used)
    return result


def balanced(requested: IntArray, allocatable: IntArray) -> IntArray:
    """``balancedResourceScorer`` (1.20) on (cpu, memory) columns."""
    fractions = []
    for k in range(2):
        a = allocatable[:, k]
        fractions.append(np.where(a == 0, 1.0, requested[:, k] / np.where(a == 0, 1, a)))
    cpu, memory = fractions
    score = np.trunc((1 - np.abs(cpu - memory)) * MAX_NODE_SCORE).astype(np.int64)
    result: IntArray = np.where((cpu >= 1) | (memory >= 1), 0, score)
    return result


class _ResourceScorer(Plugin):
    """A 1.20 score plugin over configured ``resources`` (``[{name, weight}]``)."""

    points: ClassVar[frozenset[str]] = frozenset({"score"})
    depends_on = frozenset({POD_EVENT, NODE_EVENT})
    strategy: ClassVar[str]

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__(args)
        self.resources = tuple(args.get("resources") or DEFAULT_RESOURCES)
        self.names = [str(r["name"]) for r in self.resources]
        # RequestedToCapacityRatio's constructor turns a 0 weight into 1; validation keeps the
        # other two from having one.
        self.weights = np.array([int(r.get("weight") or 1) for r in self.resources], np.int64)

    def per_resource(self, requested: IntArray, allocatable: IntArray) -> IntArray:
        raise NotImplementedError

    def combine(self, scores: IntArray) -> IntArray:
        """The weighted average over every configured resource (int64 division)."""
        total = self.weights.sum()
        result: IntArray = (scores * self.weights).sum(axis=1) // max(int(total), 1)
        return result

    def score(self, cycle: Cycle, feasible: IntArray) -> IntArray:
        allocatable, requested = _matrix(cycle, self.names, feasible)
        return self.combine(self.per_resource(requested, allocatable))

    def explain(self, cycle: Cycle, node: int) -> Mapping[str, Any]:
        nodes = np.array([node], dtype=np.int64)
        allocatable, requested = _matrix(cycle, self.names, nodes)
        scores = self.per_resource(requested, allocatable)
        rows = [
            {
                "name": name,
                "weight": int(weight),
                "allocatable": int(allocatable[0, k]),
                "requested": int(requested[0, k]),
                "score": int(scores[0, k]),
            }
            for k, (name, weight) in enumerate(zip(self.names, self.weights.tolist(), strict=True))
        ]
        return {"strategy": self.strategy, "semantics": SEMANTICS, "scored": rows}


class LeastAllocated(_ResourceScorer):
    """NodeResourcesLeastAllocated (1.20): favours nodes with less requested."""

    name = "NodeResourcesLeastAllocated"
    strategy = "LeastAllocated"

    def per_resource(self, requested: IntArray, allocatable: IntArray) -> IntArray:
        return least_requested(requested, allocatable)


class MostAllocated(_ResourceScorer):
    """NodeResourcesMostAllocated (1.20): favours nodes with more requested."""

    name = "NodeResourcesMostAllocated"
    strategy = "MostAllocated"

    def per_resource(self, requested: IntArray, allocatable: IntArray) -> IntArray:
        return most_requested(requested, allocatable)


class RequestedToCapacityRatio(_ResourceScorer):
    """RequestedToCapacityRatio (1.20): utilization through the configured shape."""

    name = "RequestedToCapacityRatio"
    strategy = "RequestedToCapacityRatio"

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__(args)
        scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
        self.shape = [
            (int(p["utilization"]), int(p["score"]) * scale) for p in args.get("shape") or ()
        ]

    def per_resource(self, requested: IntArray, allocatable: IntArray) -> IntArray:
        return broken_linear(self.shape, utilization(requested, allocatable))

    def combine(self, scores: IntArray) -> IntArray:
        """Only resources scoring above 0 count; ``math.Round`` of the float average."""
        include = scores > 0
        total = (scores * self.weights * include).sum(axis=1)
        weight_sum = (self.weights * include).sum(axis=1)
        ratio = total / np.where(weight_sum == 0, 1, weight_sum)
        rounded = np.floor(ratio + 0.5)  # scores are not negative: half away from zero
        result: IntArray = np.where(weight_sum == 0, 0, rounded).astype(np.int64)
        return result


class BalancedAllocation(Plugin):
    """NodeResourcesBalancedAllocation (1.20): cpu against memory fraction."""

    name = "NodeResourcesBalancedAllocation"
    points = frozenset({"score"})
    depends_on = frozenset({POD_EVENT, NODE_EVENT})

    def score(self, cycle: Cycle, feasible: IntArray) -> IntArray:
        allocatable, requested = _matrix(cycle, ("cpu", "memory"), feasible)
        return balanced(requested, allocatable)

    def explain(self, cycle: Cycle, node: int) -> Mapping[str, Any]:
        nodes = np.array([node], dtype=np.int64)
        allocatable, requested = _matrix(cycle, ("cpu", "memory"), nodes)
        rows = [
            {"name": name, "allocatable": int(allocatable[0, k]), "requested": int(requested[0, k])}
            for k, name in enumerate(("cpu", "memory"))
        ]
        return {"semantics": SEMANTICS, "resources": rows}


# -- from 1.22: the v1beta1-only names score with NodeResourcesFit's strategies -------------------


def _fit_args(strategy: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """A v1beta1-only plugin's args as NodeResourcesFitArgs with that scoring strategy."""
    scoring: dict[str, Any] = {
        "type": strategy,
        "resources": list(args.get("resources") or DEFAULT_RESOURCES),
    }
    if strategy == "RequestedToCapacityRatio":
        scoring["requestedToCapacityRatio"] = {"shape": list(args.get("shape") or ())}
    return {"scoringStrategy": scoring}


class LeastAllocatedAsFit(NodeResourcesFit):
    """NodeResourcesLeastAllocated on a 1.22 target: NodeResourcesFit's LeastAllocated."""

    name = "NodeResourcesLeastAllocated"
    points = frozenset({"score"})

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__(_fit_args("LeastAllocated", args))


class MostAllocatedAsFit(NodeResourcesFit):
    """NodeResourcesMostAllocated on a 1.22 target: NodeResourcesFit's MostAllocated."""

    name = "NodeResourcesMostAllocated"
    points = frozenset({"score"})

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__(_fit_args("MostAllocated", args))


class RequestedToCapacityRatioAsFit(NodeResourcesFit):
    """RequestedToCapacityRatio on a 1.22 target: NodeResourcesFit's RequestedToCapacityRatio."""

    name = "RequestedToCapacityRatio"
    points = frozenset({"score"})

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__(_fit_args("RequestedToCapacityRatio", args))
