"""Score strategies LeastAllocated, MostAllocated and BalancedAllocation, per NUMA cell.

Upstream: pkg/noderesourcetopology/score.go (``scoreForEachNUMANode``, ``podScopeScore``,
``containerScopeScore``, ``resourceToWeightMap.weight``), least_allocated.go,
most_allocated.go, balanced_allocation.go (gonum ``stat.Variance``).

They differ from the in-tree strategies of the same names: each cell is scored against its
*available* amounts using only the incoming pod's requests; every request key counts (zero
values and resources missing from the cell included); cpu is in whole cores rounded up
(``Quantity.Value()``); MostAllocated zeroes rather than clamps an oversized request; Balanced
uses the sample variance; and the node keeps the smallest non-zero cell score.

Upstream also stores each cell score at index ``NUMAID`` of a slice sized by the cell count,
which panics for non-contiguous ids (e.g. node-0 and node-2); that bookkeeping is not needed
for the result and is not reproduced.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scoring.framework import MAX_NODE_SCORE
from scoring.plugins.nrt.args import BALANCED_ALLOCATION, MOST_ALLOCATED
from scoring.plugins.nrt.resources import Amounts, PodNumaView, cores
from scoring.plugins.nrt.topology import POD_SCOPE, NodeNuma

Weights = Mapping[str, int]
Strategy = Callable[[Amounts, Amounts, Weights], int]


def resource_weights(resources: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """``resourceToWeightMap`` from ``scoringStrategy.resources`` (later duplicates win)."""
    return {str(r["name"]): int(r.get("weight") or 0) for r in resources}


def weight(weights: Weights, name: str) -> int:
    """A resource's weight: the configured one, or 1 if it is unlisted or below 1."""
    value = weights.get(name, 1)
    return value if value >= 1 else 1


def _least_one(requested: int, capacity: int, name: str) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    cap = cores(capacity, name)
    return (cap - cores(requested, name)) * MAX_NODE_SCORE // cap


def _most_one(requested: int, capacity: int, name: str) -> int:
    if capacity == 0 or requested > capacity:
        return 0
    return cores(requested, name) * MAX_NODE_SCORE // cores(capacity, name)


def _weighted(
    one: Callable[[int, int, str], int], requests: Amounts, available: Amounts, weights: Weights
) -> int:
    total = weight_sum = 0
    for name, amount in requests.items():
        w = weight(weights, name)
        total += one(amount, available.get(name, 0), name) * w
        weight_sum += w
    return total // weight_sum if weight_sum else 0  # all terms >= 0: floor == Go truncation


def least_allocated(requests: Amounts, available: Amounts, weights: Weights) -> int:
    """``leastAllocatedScoreStrategy``: (cap − req)·100/cap per resource, weighted mean."""
    return _weighted(_least_one, requests, available, weights)


def most_allocated(requests: Amounts, available: Amounts, weights: Weights) -> int:
    """``mostAllocatedScoreStrategy``: req·100/cap per resource, weighted mean."""
    return _weighted(_most_one, requests, available, weights)


def balanced_allocation(requests: Amounts, available: Amounts, weights: Weights) -> int:
    """``balancedAllocationScoreStrategy``: 100·(1 − sample variance of req/cap); weights ignored.

    A cell lacking a requested resource counts as fraction 1; any fraction above 1 scores 0.
    The variance is gonum's corrected two-pass formula, summed in request-name order (upstream
    walks a Go map, so its float rounding order is not fixed either).
    """
    fractions = []
    for name in sorted(requests):
        capacity = cores(available.get(name, 0), name)
        fraction = cores(requests[name], name) / capacity if capacity != 0 else 1.0
        if fraction > 1:
            return 0
        fractions.append(fraction)
    if len(fractions) < 2:
        return 0  # NaN upstream; unreachable for the Guaranteed pods that get here
    return int((1 - sample_variance(fractions)) * MAX_NODE_SCORE)


def sample_variance(values: Sequence[float]) -> float:
    """gonum ``stat.Variance(x, nil)``: corrected two-pass, divided by n − 1."""
    n = len(values)
    mean = 0.0
    for v in values:
        mean += v
    mean /= n
    squares = compensation = 0.0
    for v in values:
        d = v - mean
        squares += d * d
        compensation += d
    return (squares - compensation * compensation / n) / (n - 1)


STRATEGIES: Mapping[str, Strategy] = {
    MOST_ALLOCATED: most_allocated,
    BALANCED_ALLOCATION: balanced_allocation,
}


def strategy_function(kind: str) -> Strategy:
    return STRATEGIES.get(kind, least_allocated)


def cell_scores(
    numa: NodeNuma, requests: Amounts, strategy: Strategy, weights: Weights
) -> list[int]:
    return [strategy(requests, cell.available, weights) for cell in numa.cells]


def min_non_zero(scores: Sequence[int]) -> int:
    """``scoreForEachNUMANode``: kubelet never picks a cell scoring 0, so keep the smallest of
    the others (0 only when every cell scores 0)."""
    result = 0
    for score in scores:
        if result == 0 or (score != 0 and score < result):
            result = score
    return result


def allocation_score(
    numa: NodeNuma, pod: PodNumaView, strategy: Strategy, weights: Weights
) -> tuple[int, list[tuple[str, list[int], int]]]:
    """A single-numa-node node's score, with (container, cell scores, container score) rows.

    Pod scope scores the effective request; container scope scores every init and app container
    on the untouched cells and takes the mean, truncated.
    """
    if numa.manager.scope == POD_SCOPE:
        scores = cell_scores(numa, pod.effective, strategy, weights)
        best = min_non_zero(scores)
        return best, [("", scores, best)]
    rows = []
    for container in pod.all_containers:
        scores = cell_scores(numa, container.requests, strategy, weights)
        rows.append((container.name, scores, min_non_zero(scores)))
    if not rows:
        return 0, rows
    return sum(row[2] for row in rows) // len(rows), rows
