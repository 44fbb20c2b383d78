"""Filter: can the node's topology manager (single-numa-node) admit the pod?

Upstream: pkg/noderesourcetopology/filter.go (``singleNUMAContainerLevelHandler``,
``singleNUMAPodLevelHandler``, ``resourcesAvailableInAnyNUMANodes``) and numaresources.go
(``isResourceSetSuitable``, ``subtractResourcesFromNUMANodeList``).

Only ``single-numa-node`` is modelled upstream; every other policy admits the pod. The NUMA cell
kubelet would pick is the lowest id left after intersecting, request by request, the cells that
can host each request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from scoring.framework import SUCCESS, Status, error, unschedulable
from scoring.plugins.nrt.resources import (
    APP,
    Amounts,
    ContainerRequest,
    PodNumaView,
    is_host_level,
    is_numa_affine,
)
from scoring.plugins.nrt.topology import POD_SCOPE, SINGLE_NUMA_NODE, NodeNuma, NumaCell
from scoring.quantity import format_amount

FULL_MASK = (1 << 64) - 1  # bm.NewEmptyBitMask().Fill(): every NUMA id a bitmask holds

CANNOT_ALIGN_POD = "cannot align pod"
CANNOT_ALIGN_CONTAINER = "cannot align container"
INCONSISTENT_ACCOUNTING = "inconsistent resource accounting"

Available = list[dict[str, int]]  # per cell (list position), mutable during container scope


@dataclass(frozen=True)
class CellChoice:
    """``resourcesAvailableInAnyNUMANodes`` for one set of requests.

    ``cell`` is the NUMA id kubelet would pick (None if none fits); on failure ``resource`` names
    the request that left no cell. ``candidates`` maps each constraining request to the ids of
    the cells able to host it (for explanations).
    """

    cell: int | None
    resource: str | None = None
    missing_at_node_level: bool = False
    candidates: Mapping[str, tuple[int, ...]] = field(default_factory=dict)


def suitable(guaranteed: bool, name: str, requested: int, available: int) -> bool:
    """``isResourceSetSuitable``: non-Guaranteed pods get cpu/memory/hugepages from shared pools."""
    if not guaranteed and is_numa_affine(name):
        return True
    return available >= requested


def choose_cell(
    numa: NodeNuma, available: Available, guaranteed: bool, requests: Amounts
) -> CellChoice:
    """The lowest NUMA id that can host every non-zero request, or the request that fails.

    Upstream returns at the first failing request (in Go map order); every request is still
    looked at here so explanations can list the cells able to host each one.
    """
    mask, failed, missing = FULL_MASK, None, False
    candidates: dict[str, tuple[int, ...]] = {}
    for name, amount in requests.items():
        if amount == 0:
            continue
        if name not in numa.node_resources:
            failed, missing = (failed, missing) if failed else (name, True)
            continue
        bits, has_affinity, fitting = 0, False, []
        for cell, free in zip(numa.cells, available, strict=True):
            if name not in free:
                continue
            has_affinity = True
            if suitable(guaranteed, name, amount, free[name]):
                bits |= 1 << cell.id
                fitting.append(cell.id)
        if not has_affinity and is_host_level(name):
            continue  # e.g. ephemeral-storage, or a device no zone reports
        candidates[name] = tuple(fitting)
        mask &= bits
        if mask == 0 and failed is None:
            failed = name
    if failed is not None:
        return CellChoice(None, failed, missing, candidates)
    return CellChoice((mask & -mask).bit_length() - 1, candidates=candidates)


@dataclass(frozen=True)
class Placement:
    """Where one container (or the whole pod, in pod scope) would land; on failure, what each
    cell had left at that point (``seen``, per cell position)."""

    container: str
    kind: str
    choice: CellChoice
    seen: tuple[Mapping[str, int], ...] = ()


def _placed(container: str, kind: str, choice: CellChoice, available: Available) -> Placement:
    seen = tuple(dict(free) for free in available) if choice.cell is None else ()
    return Placement(container, kind, choice, seen)


@dataclass(frozen=True)
class Admission:
    """The Filter verdict on one node plus the placements behind it."""

    status: Status
    placements: tuple[Placement, ...] = ()


def admit(numa: NodeNuma, pod: PodNumaView) -> Admission:
    """Filter for a node with NRT data (after the BestEffort shortcut)."""
    if numa.manager.policy != SINGLE_NUMA_NODE:
        return Admission(SUCCESS)
    if numa.manager.scope == POD_SCOPE:
        return admit_pod_scope(numa, pod)
    return admit_container_scope(numa, pod)


def fresh_available(cells: tuple[NumaCell, ...]) -> Available:
    return [dict(cell.available) for cell in cells]


def admit_pod_scope(numa: NodeNuma, pod: PodNumaView) -> Admission:
    available = fresh_available(numa.cells)
    choice = choose_cell(numa, available, pod.guaranteed, pod.effective)
    placement = (_placed("", "pod", choice, available),)
    if choice.cell is None:
        return Admission(unschedulable(CANNOT_ALIGN_POD), placement)
    return Admission(SUCCESS, placement)


def admit_container_scope(numa: NodeNuma, pod: PodNumaView) -> Admission:
    """Init containers against the untouched cells (they run one at a time), then app containers,
    each consuming its cell so the next ones see what is left."""
    placements: list[Placement] = []
    untouched = fresh_available(numa.cells)
    for container in pod.init_containers:
        choice = choose_cell(numa, untouched, pod.guaranteed, container.requests)
        placements.append(_placed(container.name, container.kind, choice, untouched))
        if choice.cell is None:
            message = f"cannot align {container.kind} container"
            return Admission(unschedulable(message), tuple(placements))
    available = fresh_available(numa.cells)
    for container in pod.containers:
        choice = choose_cell(numa, available, pod.guaranteed, container.requests)
        placements.append(_placed(container.name, APP, choice, available))
        if choice.cell is None:
            return Admission(unschedulable(CANNOT_ALIGN_CONTAINER), tuple(placements))
        problem = consume(numa.cells, available, choice.cell, pod.guaranteed, container)
        if problem:
            return Admission(error(INCONSISTENT_ACCOUNTING, problem), tuple(placements))
    return Admission(SUCCESS, tuple(placements))


def consume(
    cells: tuple[NumaCell, ...],
    available: Available,
    cell_id: int,
    guaranteed: bool,
    container: ContainerRequest,
) -> str | None:
    """``subtractResourcesFromNUMANodeList``: take the container's requests from every cell with
    ``cell_id``. Non-Guaranteed pods take only devices (their cpu/memory are shared); zero and
    cell-missing requests are skipped. Returns upstream's error text if a value would go negative.
    """
    for cell, free in zip(cells, available, strict=True):
        if cell.id != cell_id:
            continue
        for name, amount in container.requests.items():
            if (not guaranteed and is_numa_affine(name)) or amount == 0 or name not in free:
                continue
            if free[name] < amount:
                return (
                    f"resource {json.dumps(name)} request {format_amount(name, amount)} exceeds "
                    f"NUMA {cell_id} availability {format_amount(name, free[name])}"
                )
            free[name] -= amount
    return None
