"""Per-snapshot NUMA state: every node's parsed NRT, its current availability, and grouping.

Built once per snapshot through ``Snapshot.extension`` and kept in step with simulated
placements (``pod_added``/``pod_removed``, i.e. Reserve/Unreserve). The NRT objects already
account for the pods bound when the snapshot was taken; only later placements change them.
How a placement changes them depends on the plugin's cache configuration:

- ``over-reserve`` (``cacheResyncPeriodSeconds > 0``, upstream's OverReserve cache,
  pkg/noderesourcetopology/cache/overreserve.go and store.go ``resourceStore.UpdateNRT``): the
  effective request of every pod reserved on the node is taken from *every* cell, clamped at 0,
  because the scheduler cannot know which cell kubelet will use.
- ``settled`` (the passthrough and discard-reserved caches): upstream reads the NRT as published
  and sees a placement only once the node's topology exporter reports it. A simulation has no
  exporter, so the engine publishes what it would report: the app containers' exclusive
  requests (devices always, cpu/memory/hugepages for Guaranteed pods, as
  ``subtractResourcesFromNUMANodeList`` counts them) taken from the cell the Filter chose, or,
  where no single cell is chosen (other policies, or a pod that does not fit one cell), spread
  over the narrowest fitting set of cells as LeastNUMANodes computes it.

Nodes with identical topology, availability and node-level resources share one group, so
Filter and Score run once per distinct group rather than once per node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from scoring.objects import Node, Pod
from scoring.plugins.noderesources import is_scalar_resource
from scoring.plugins.nrt.filter import Available, choose_cell, fresh_available
from scoring.plugins.nrt.least_numa import cells_needed_for, drain
from scoring.plugins.nrt.resources import (
    ALWAYS_AT_NODE_LEVEL,
    PodNumaView,
    effective_request,
    is_numa_affine,
)
from scoring.plugins.nrt.topology import (
    POD_SCOPE,
    SINGLE_NUMA_NODE,
    NodeNuma,
    NodeTopology,
    NumaCell,
    parse_topology,
)
from scoring.snapshot import NODE_EVENT, TOPOLOGY_EVENT, IntArray, Snapshot

SETTLED = "settled"
OVER_RESERVE = "over-reserve"

Delta = tuple[int, str, int]  # (cell position, resource, amount taken)


def accounting_mode(args: Mapping[str, Any]) -> str:
    """OverReserve only when the resync period is positive and discardReservedNodes is off."""
    period = args.get("cacheResyncPeriodSeconds") or 0
    if args.get("discardReservedNodes") or period <= 0:
        return SETTLED
    return OVER_RESERVE


def parse_all(snapshot: Snapshot) -> list[NodeTopology | None]:
    """Each node's NRT object (looked up by node name), parsed once per snapshot."""
    return [
        parse_topology(snapshot.topologies[name]) if name in snapshot.topologies else None
        for name in snapshot.node_names
    ]


class TopologyState:
    """NUMA availability of every node with NRT data, under one accounting mode.

    Pods the cluster binds or deletes (a refresh) change nothing here: the node's NRT reports
    them when its exporter next publishes (``follows_cluster_pods``).
    """

    follows_cluster_pods = False

    def __init__(self, snapshot: Snapshot, mode: str) -> None:
        self.mode = mode
        self._snapshot = snapshot
        self.topologies = snapshot.extension("nrt.topologies", parse_all)
        self._numa: list[NodeNuma | None] = [
            _published(node, topology)
            for node, topology in zip(snapshot.nodes, self.topologies, strict=True)
        ]
        self._reserved: dict[int, dict[int, dict[str, int]]] = {}  # node → pod id → request
        self._ledger: dict[int, tuple[int, list[Delta]]] = {}  # pod id → (node, deltas)
        self._group_ids: npt.NDArray[np.int32] | None = None
        self._groups: list[NodeNuma] = []

    # -- reading ------------------------------------------------------------------------------

    def numa(self, node: int) -> NodeNuma | None:
        return self._numa[node]

    def grouping(self) -> tuple[npt.NDArray[np.int32], list[NodeNuma]]:
        """Group id per node (-1 without NRT data) and one :class:`NodeNuma` per group."""
        if self._group_ids is None:
            self._group_ids, self._groups = _group(self._numa)
        return self._group_ids, self._groups

    # -- following cluster changes (snapshot NodeEventListener) ----------------------------------

    def node_event(self, kind: str, node: int) -> None:
        """A new NRT object or Node object: the node's cells are what it now publishes.

        A published NRT already accounts for every pod on the node, so the node's over-reserved
        requests and settled ledger entries are dropped (removing such a pod later frees its
        cells only once a newer NRT reports it, like the pods bound when the snapshot was taken).
        """
        snapshot = self._snapshot
        if kind == TOPOLOGY_EVENT:
            raw = snapshot.topologies.get(snapshot.node_names[node])
            topology = parse_topology(raw) if raw is not None else None
            # A new list: the parsed-objects extension may be shared with other states.
            self.topologies = [*self.topologies[:node], topology, *self.topologies[node + 1 :]]
            self._reserved.pop(node, None)
            self._ledger = {pod: entry for pod, entry in self._ledger.items() if entry[0] != node}
            self._numa[node] = _published(snapshot.nodes[node], topology)
        elif kind == NODE_EVENT:
            current = self._numa[node]
            cells = None if current is None else current.cells
            self._numa[node] = _published(snapshot.nodes[node], self.topologies[node], cells)
        else:
            return
        self._group_ids = None

    # -- following placements (snapshot PodListener) -------------------------------------------

    def pod_added(self, pod: Pod, node: int) -> None:
        numa = self._numa[node]
        if numa is None:
            return
        if self.mode == OVER_RESERVE:
            self._reserved.setdefault(node, {})[id(pod)] = effective_request(pod)
            self._set_cells(node, self._over_reserved_cells(node))
            return
        available = fresh_available(numa.cells)
        deltas = settle(numa, available, PodNumaView.of(pod))
        self._ledger[id(pod)] = (node, deltas)
        self._set_cells(node, _with_available(numa.cells, available))

    def pod_removed(self, pod: Pod, node: int) -> None:
        numa = self._numa[node]
        if numa is None:
            return
        if self.mode == OVER_RESERVE:
            self._reserved.get(node, {}).pop(id(pod), None)
            self._set_cells(node, self._over_reserved_cells(node))
            return
        entry = self._ledger.pop(id(pod), None)
        if entry is None:
            return
        available = fresh_available(numa.cells)
        for position, name, amount in entry[1]:
            available[position][name] += amount
        self._set_cells(node, _with_available(numa.cells, available))

    def _over_reserved_cells(self, node: int) -> tuple[NumaCell, ...]:
        """``UpdateNRT``: each cell loses the summed requests of the reserved pods, floored at 0."""
        base = self.topologies[node]
        assert base is not None
        totals: dict[str, int] = {}
        for request in self._reserved.get(node, {}).values():
            for name, amount in request.items():
                totals[name] = totals.get(name, 0) + amount
        available = [
            {n: max(0, v - totals[n]) if n in totals else v for n, v in cell.available.items()}
            for cell in base.cells
        ]
        return _with_available(base.cells, available)

    def _set_cells(self, node: int, cells: tuple[NumaCell, ...]) -> None:
        numa = self._numa[node]
        assert numa is not None
        self._numa[node] = NodeNuma(numa.manager, cells, numa.node_resources)
        self._group_ids = None


def _published(
    node: Node, topology: NodeTopology | None, cells: tuple[NumaCell, ...] | None = None
) -> NodeNuma | None:
    """What Filter and Score see of a node: its NRT's manager and ``cells`` (default: as
    published) and the node-level resource names (``util.ResourceList(nodeInfo.Allocatable)``)."""
    if topology is None:
        return None
    scalars = {name for name in node.allocatable if is_scalar_resource(name)}
    resources = frozenset(ALWAYS_AT_NODE_LEVEL | scalars)
    return NodeNuma(topology.manager, topology.cells if cells is None else cells, resources)


def subset_groups(
    state: TopologyState, nodes: IntArray
) -> tuple[npt.NDArray[np.int32], list[NodeNuma]]:
    """Like :meth:`TopologyState.grouping` for ``nodes`` only (ids aligned with ``nodes``)."""
    return _group([state.numa(node) for node in nodes.tolist()])


def _group(numas: Sequence[NodeNuma | None]) -> tuple[npt.NDArray[np.int32], list[NodeNuma]]:
    """Nodes with the same NUMA layout and availability share one group (one evaluation):
    a group id per entry (-1 without NRT data) and one :class:`NodeNuma` per group."""
    index: dict[tuple[Any, ...], int] = {}
    groups: list[NodeNuma] = []
    ids = np.full(len(numas), -1, dtype=np.int32)
    for k, numa in enumerate(numas):
        if numa is None:
            continue
        key = numa.signature()
        if key not in index:
            index[key] = len(groups)
            groups.append(numa)
        ids[k] = index[key]
    return ids, groups


def _with_available(cells: tuple[NumaCell, ...], available: Available) -> tuple[NumaCell, ...]:
    return tuple(
        NumaCell(cell.id, cell.zone, free, cell.costs)
        for cell, free in zip(cells, available, strict=True)
    )


def settle(numa: NodeNuma, available: Available, pod: PodNumaView) -> list[Delta]:
    """Take the pod's exclusive app-container requests from ``available`` (in place), as the
    topology exporter would report them once kubelet admitted the pod; returns what was taken."""
    before = [dict(free) for free in available]
    requests = [_exclusive(c.requests, pod.guaranteed) for c in pod.containers]
    single = numa.manager.policy == SINGLE_NUMA_NODE
    if single and numa.manager.scope == POD_SCOPE:
        choice = choose_cell(numa, available, pod.guaranteed, pod.effective)
        for request in requests:
            _place(numa, available, pod.guaranteed, request, choice.cell)
    else:
        for request in requests:
            cell = choose_cell(numa, available, pod.guaranteed, request).cell if single else None
            _place(numa, available, pod.guaranteed, request, cell)
    return [
        (position, name, old[name] - free[name])
        for position, (old, free) in enumerate(zip(before, available, strict=True))
        for name in free
        if old[name] != free[name]
    ]


def _exclusive(requests: Mapping[str, int], guaranteed: bool) -> dict[str, int]:
    """The requests a cell accounts for: non-Guaranteed cpu/memory/hugepages come from shared
    pools and are not NUMA-bound; zero requests take nothing."""
    return {
        name: amount
        for name, amount in requests.items()
        if amount and (guaranteed or not is_numa_affine(name))
    }


def _place(
    numa: NodeNuma,
    available: Available,
    guaranteed: bool,
    request: dict[str, int],
    cell: int | None,
) -> None:
    ids = (cell,) if cell is not None else cells_needed_for(numa, available, guaranteed, request)
    drain(numa.cells, available, ids, request)
