"""Score strategy LeastNUMANodes: prefer nodes needing the fewest, closest NUMA cells.

Upstream: pkg/noderesourcetopology/least_numa.go and numaresources.go ``subtractFromNUMAs``.
Applies to every topology manager policy. Distances are averaged in float32 as upstream does,
so equality with the minimum average behaves identically.

Upstream's container scope subtracts each container's requests from ``numaNodes[id]``, i.e. it
indexes the cell *list* by NUMA *id*; that is only right when ids are 0..n−1 in list order. Here
the cell with that id is used, which agrees with upstream wherever upstream is correct.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from scoring.framework import MAX_NODE_SCORE, MIN_NODE_SCORE
from scoring.plugins.nrt.filter import Available, fresh_available, suitable
from scoring.plugins.nrt.resources import Amounts, PodNumaView
from scoring.plugins.nrt.topology import POD_SCOPE, NodeNuma, NumaCell

MAX_DISTANCE = 255  # ACPI SLIT "unknown"; also the value of a missing cost
_MAX_DISTANCE32 = np.float32(MAX_DISTANCE)


@dataclass(frozen=True)
class NumaSet:
    """The cells a request needs: their ids (ascending) and whether their distance is minimal."""

    ids: tuple[int, ...]
    optimal: bool


def only_non_numa(cells: Sequence[NumaCell], requests: Amounts) -> bool:
    """``onlyNonNUMAResources``: no requested name (zero-valued included) appears in any cell."""
    return not any(name in cell.available for name in requests for cell in cells)


def average_distance(cells: Sequence[NumaCell], members: Sequence[int]) -> np.float32:
    """``nodesAvgDistance`` over list positions, float32; a missing cost counts as 255."""
    if not members:
        return _MAX_DISTANCE32
    total = 0
    for i in members:
        for j in members:
            total += cells[i].costs.get(cells[j].id, MAX_DISTANCE)
    return np.float32(total) / np.float32(len(members) * len(members))


def numa_nodes_required(
    cells: Sequence[NumaCell], available: Available, guaranteed: bool, requests: Amounts
) -> NumaSet | None:
    """``numaNodesRequired``: the smallest combination of cells that fits, or None."""
    for size in range(1, len(cells) + 1):
        members = _suitable_combination(cells, available, guaranteed, requests, size)
        if members is not None:
            combo, optimal = members
            return NumaSet(tuple(sorted({cells[i].id for i in combo})), optimal)
    return None


def _suitable_combination(
    cells: Sequence[NumaCell],
    available: Available,
    guaranteed: bool,
    requests: Amounts,
    size: int,
) -> tuple[tuple[int, ...], bool] | None:
    """``findSuitableCombination`` over the size-``size`` combinations in lexicographic order."""
    combos = list(combinations(range(len(cells)), size))
    distances = [average_distance(cells, combo) for combo in combos]
    min_average = min([_MAX_DISTANCE32, *distances])
    best: tuple[int, ...] | None = None
    best_distance = np.float32(256)
    for combo, distance in zip(combos, distances, strict=True):
        if not all(name in available[i] for i in combo for name in requests):
            continue
        if not _fits(combo, available, guaranteed, requests):
            continue
        if distance == min_average:
            return combo, True
        if distance < best_distance:
            best, best_distance = combo, distance
    return None if best is None else (best, False)


def _fits(combo: Sequence[int], available: Available, guaranteed: bool, requests: Amounts) -> bool:
    """``checkResourcesFit`` against the summed availability of the combination."""
    for name, amount in requests.items():
        if amount == 0:
            continue
        pooled = sum(available[i].get(name, 0) for i in combo)
        if not suitable(guaranteed, name, amount, pooled):
            return False
    return True


def drain(
    cells: Sequence[NumaCell], available: Available, ids: Sequence[int], requests: Amounts
) -> None:
    """``subtractFromNUMAs``: take each request from the given cells in id order, emptying a
    cell before moving to the next (no QoS distinction)."""
    position: dict[int, int] = {}
    for index, cell in enumerate(cells):
        position.setdefault(cell.id, index)
    for name, amount in requests.items():
        left = amount
        for cell_id in ids:
            if left == 0:
                break
            free = available[position[cell_id]]
            if name not in free:
                continue
            if left >= free[name]:
                left -= free[name]
                free[name] = 0
            else:
                free[name] -= left
                left = 0


def normalize(count: int, optimal: bool, max_numa_nodes: int) -> int:
    """``normalizeScore``: 100 − count·(100/max) plus half a step when the distance is optimal."""
    step = MAX_NODE_SCORE // max_numa_nodes
    score = MAX_NODE_SCORE - count * step
    return score + step // 2 if optimal else score


@dataclass(frozen=True)
class LeastNumaResult:
    score: int
    rows: tuple[tuple[str, NumaSet | None], ...]  # (container, cells needed) for explanations


def least_numa_score(numa: NodeNuma, pod: PodNumaView) -> LeastNumaResult:
    """The LeastNUMANodes score of a node (Guaranteed pods; others score 100 earlier)."""
    cells, guaranteed = numa.cells, pod.guaranteed
    available: Available = fresh_available(cells)
    if numa.manager.scope == POD_SCOPE:
        if only_non_numa(cells, pod.effective):
            return LeastNumaResult(MAX_NODE_SCORE, ())
        needed = numa_nodes_required(cells, available, guaranteed, pod.effective)
        if needed is None:
            return LeastNumaResult(MIN_NODE_SCORE, (("", None),))
        score = normalize(len(needed.ids), needed.optimal, numa.manager.max_numa_nodes)
        return LeastNumaResult(score, (("", needed),))
    widest, all_optimal = 0, True
    rows: list[tuple[str, NumaSet | None]] = []
    for container in pod.all_containers:
        if only_non_numa(cells, container.requests):
            continue
        needed = numa_nodes_required(cells, available, guaranteed, container.requests)
        rows.append((container.name, needed))
        if needed is None:
            return LeastNumaResult(MIN_NODE_SCORE, tuple(rows))
        all_optimal = all_optimal and needed.optimal
        widest = max(widest, len(needed.ids))
        drain(cells, available, needed.ids, container.requests)
    if widest == 0:
        return LeastNumaResult(MAX_NODE_SCORE, tuple(rows))
    return LeastNumaResult(normalize(widest, all_optimal, numa.manager.max_numa_nodes), tuple(rows))


def cells_needed_for(
    numa: NodeNuma, available: Available, guaranteed: bool, requests: Mapping[str, int]
) -> tuple[int, ...]:
    """Cells a request would spread over (narrowest fit, else every cell), for accounting."""
    needed = numa_nodes_required(numa.cells, available, guaranteed, requests)
    return needed.ids if needed is not None else tuple(sorted({c.id for c in numa.cells}))
