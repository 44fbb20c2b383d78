"""The cluster snapshot: nodes × resources as numpy columns, plus per-node detail.

Filters and scores run vectorized over these columns; explanations read the per-node objects.
The snapshot is mutable only through :meth:`Snapshot.assume_pod` / :meth:`Snapshot.forget_pod`
(Reserve/Unreserve in simulations), which keep the columns and every registered plugin state
consistent, and bump per-node generations that caches key on.
"""

from __future__ import annotations

import copy
import gc
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from scoring.clusterobjects import KINDS as CLUSTER_OBJECT_KINDS
from scoring.clusterobjects import ClusterObjects
from scoring.objects import Node, Pod, Taint, parse_cluster_pod, parse_node
from scoring.packed import PackedObjects
from scoring.refresh_plan import PodKey, RefreshPlan, api_group, plan_refresh, pod_key

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# Resources every node has a column for, first and in this order.
CORE_RESOURCES = ("cpu", "memory", "ephemeral-storage", "pods")
NODE_METRIC = ("slo.koordinator.sh", "NodeMetric")
NODE_RESOURCE_TOPOLOGY = ("topology.node.k8s.io", "NodeResourceTopology")

# Kinds of per-node change (``Snapshot.generations``, ``NodeEventListener``, ``Plugin.depends_on``).
POD_EVENT = "pod"  # a pod was placed on or removed from the node
NODE_EVENT = "node"  # the Node object changed (labels, taints, allocatable, annotations, ...)
NODE_METRIC_EVENT = "nodeMetric"  # the node's NodeMetric was replaced or removed
TOPOLOGY_EVENT = "topology"  # the node's NodeResourceTopology was replaced or removed
EVENT_KINDS = (POD_EVENT, NODE_EVENT, NODE_METRIC_EVENT, TOPOLOGY_EVENT)

T = TypeVar("T")


class PodListener(Protocol):
    """Plugin state that follows pods being added to or removed from nodes.

    A state whose source already counts the pods the cluster binds (a NodeResourceTopology
    publishes the availability they leave) sets ``follows_cluster_pods = False``: it then hears
    only Reserve/Unreserve (:meth:`Snapshot.assume_pod`/``forget_pod``), not the pods a refresh
    adds or deletes (:meth:`Snapshot.apply_changes`).
    """

    def pod_added(self, pod: Pod, node: int) -> None: ...

    def pod_removed(self, pod: Pod, node: int) -> None: ...


class NodeEventListener(Protocol):
    """Plugin state that updates itself in place when a node, NodeMetric or NRT changes.

    Extensions without ``node_event`` are dropped on such a change and rebuilt on next use.
    """

    def node_event(self, kind: str, node: int) -> None: ...


class NodeSetListener(Protocol):
    """Plugin state that follows nodes being deleted or added (a refresh) instead of being
    dropped and rebuilt: ``keep`` marks the rows that stay (in order); ``count`` rows are
    appended at the end, already in the snapshot when it is called."""

    def nodes_deleted(self, keep: BoolArray) -> None: ...

    def nodes_added(self, count: int) -> None: ...


def keep_columns(array: npt.NDArray[Any], keep: BoolArray) -> npt.NDArray[Any]:
    """``array`` without the deleted nodes' entries along its last (node) axis."""
    result: npt.NDArray[Any] = array[..., keep]
    return result


def add_columns(array: npt.NDArray[Any], count: int) -> npt.NDArray[Any]:
    """``array`` with ``count`` zero entries appended along its last (node) axis."""
    zeros = np.zeros((*array.shape[:-1], count), dtype=array.dtype)
    return np.concatenate([array, zeros], axis=-1)


@dataclass
class LabelColumn:
    """One label key over all nodes: a code per node (-1 where the label is absent)."""

    codes: npt.NDArray[np.int32]
    vocabulary: dict[str, int]

    def code(self, value: str) -> int:
        return self.vocabulary.get(value, -2)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while bulk-building acyclic objects.

    With tens of thousands of parsed objects alive, every generation-2 pass walks all of them;
    pausing turns snapshot building from quadratic-looking to linear time (4x faster at 50k pods).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_group = api_group
PENDING, UNBOUND = -1, -2  # where a pod is when it is on no node of the snapshot


def _on_variant(state: Any, variant: Snapshot, nodes: list[int]) -> Any:
    """A kept plugin state as it stands on ``variant`` (see :meth:`Snapshot.variant`)."""
    adapt = getattr(state, "for_variant", None)
    return state if adapt is None else adapt(variant, nodes)


class Snapshot:
    """Nodes, bound pods, pending pods, NodeMetrics and NodeResourceTopologies of one cluster,
    plus the Services, controllers and Namespaces some plugins read (``cluster_objects``)."""

    # Bumped when nodes are added or deleted: node indices changed (caches keyed by them reset).
    layout = 0
    # Each pod of the cluster by namespace/name, for refreshes (where it is follows from its
    # nodeName: ``_where``); built on first use, dropped when simulated placements move pods.
    _pod_locations: dict[PodKey, Pod] | None = None
    _by_name: tuple[int, IntArray, IntArray] | None = None  # (layout, order, rank)
    # How many plugin states were built on this snapshot (:meth:`extension`): a caller holding
    # the snapshot long can tell that an evaluation built new long-lived objects.
    states_built = 0

    def __init__(
        self,
        nodes: list[Node],
        pods: Iterable[Pod] = (),
        node_metrics: Mapping[str, Mapping[str, Any]] | None = None,
        topologies: Mapping[str, Mapping[str, Any]] | None = None,
        cluster_objects: ClusterObjects | None = None,
    ) -> None:
        self.nodes = nodes
        # Services, controllers and Namespaces (PodTopologySpread defaults, InterPodAffinity).
        self.cluster_objects = cluster_objects or ClusterObjects()
        self.node_names = [n.name for n in nodes]
        self.index = {name: i for i, name in enumerate(self.node_names)}
        # Read when plugin state is built or a page shows one: held packed (scoring.packed).
        self.node_metrics: MutableMapping[str, Mapping[str, Any]] = PackedObjects(node_metrics)
        self.topologies: MutableMapping[str, Mapping[str, Any]] = PackedObjects(topologies)
        self.pending: list[Pod] = []
        self.pods_on_node: list[list[Pod]] = [[] for _ in nodes]
        self.unbound: list[Pod] = []  # bound to a node the snapshot does not have
        self._listeners: list[PodListener] = []
        self._extensions: dict[str, Any] = {}
        self._labels: dict[str, LabelColumn] = {}
        self.generation = np.zeros(len(nodes), dtype=np.int64)
        self.generations = {kind: np.zeros(len(nodes), dtype=np.int64) for kind in EVENT_KINDS}
        self.unschedulable = np.array([n.unschedulable for n in nodes], dtype=bool)
        self._build_resources(nodes, pods)
        self._build_taints()
        self._place_initial(pods)

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def from_objects(
        cls,
        objects: Iterable[Mapping[str, Any]],
        warn: Callable[[str], None] | None = None,
    ) -> Snapshot:
        """Build from Kubernetes objects; other kinds are skipped with a warning."""
        with gc_paused():
            return cls._from_objects(objects, warn or (lambda m: print(m, file=sys.stderr)))

    @classmethod
    def _from_objects(
        cls, objects: Iterable[Mapping[str, Any]], warn: Callable[[str], None]
    ) -> Snapshot:
        nodes: list[Node] = []
        pods: list[Pod] = []
        metrics: dict[str, Mapping[str, Any]] = {}
        topologies: dict[str, Mapping[str, Any]] = {}
        cluster_objects = ClusterObjects()
        for obj in objects:
            kind = str(obj.get("kind", ""))
            group = _group(kind, str(obj.get("apiVersion", "")))
            name = str((obj.get("metadata") or {}).get("name", ""))
            if group == ("", "Node"):
                nodes.append(parse_node(obj))
            elif group == ("", "Pod"):
                pods.append(parse_cluster_pod(obj))
            elif group == NODE_METRIC:
                metrics[name] = obj
            elif group == NODE_RESOURCE_TOPOLOGY:
                topologies[name] = obj
            elif group in CLUSTER_OBJECT_KINDS:
                cluster_objects.add(group, obj)
            else:
                warn(f"warning: ignoring {obj.get('apiVersion')} {kind} {name!r}: kind not read")
        return cls(nodes, pods, metrics, topologies, cluster_objects)

    def _build_resources(self, nodes: list[Node], pods: Iterable[Pod]) -> None:
        names: set[str] = set()
        for node in nodes:
            names.update(node.allocatable)
        self.resources = [*CORE_RESOURCES, *sorted(names - set(CORE_RESOURCES))]
        self.resource_index = {name: i for i, name in enumerate(self.resources)}
        shape = (len(nodes), len(self.resources))
        self.allocatable = np.zeros(shape, dtype=np.int64)
        for i, node in enumerate(nodes):
            for name, amount in node.amounts.items():
                self.allocatable[i, self.resource_index[name]] = amount
        self.requested = np.zeros(shape, dtype=np.int64)
        self.non_zero_requested = np.zeros((len(nodes), 2), dtype=np.int64)

    def _build_taints(self) -> None:
        sets: dict[tuple[Taint, ...], int] = {}
        ids = [sets.setdefault(node.taints, len(sets)) for node in self.nodes]
        self.taint_sets: list[tuple[Taint, ...]] = list(sets)
        self.taint_set_ids = np.array(ids, dtype=np.int32)

    def _set_taints(self, index: int, taints: tuple[Taint, ...]) -> None:
        """One node's taint set id (a set no node has any more stays listed, unused)."""
        if self.taint_sets[self.taint_set_ids[index]] == taints:
            return
        try:
            self.taint_set_ids[index] = self.taint_sets.index(taints)
        except ValueError:
            self.taint_sets.append(taints)
            self.taint_set_ids[index] = len(self.taint_sets) - 1

    def _place_initial(self, pods: Iterable[Pod]) -> None:
        """Account every bound pod at once (one scatter-add instead of per-pod array updates)."""
        rows: list[int] = []
        columns: list[int] = []
        amounts: list[int] = []
        placed: list[int] = []
        non_zero: list[tuple[int, int]] = []
        for pod in pods:
            if pod.is_terminal:
                continue  # the scheduler's informer drops Succeeded/Failed pods
            node = self.index.get(pod.node_name) if pod.node_name else None
            if not pod.node_name:
                self.pending.append(pod)
            elif node is None:
                self.unbound.append(pod)
            else:
                self.pods_on_node[node].append(pod)
                for name, amount in (*pod.requests.items(), ("pods", 1)):
                    rows.append(node)
                    columns.append(self.resource_column(name))
                    amounts.append(amount)
                placed.append(node)
                non_zero.append(pod.non_zero_requests)
        np.add.at(self.requested, (np.array(rows, np.int64), np.array(columns, np.int64)), amounts)
        if placed:
            np.add.at(self.non_zero_requested, np.array(placed, np.int64), non_zero)

    # -- resources ----------------------------------------------------------------------------

    def resource_column(self, name: str) -> int:
        """Column of a resource, adding an all-zero column for a name no node has."""
        column = self.resource_index.get(name)
        if column is not None:
            return column
        self.resources.append(name)
        self.resource_index[name] = column = len(self.resources) - 1
        zeros = np.zeros((len(self.nodes), 1), dtype=np.int64)
        self.allocatable = np.hstack([self.allocatable, zeros])
        self.requested = np.hstack([self.requested, zeros])
        return column

    def request_vector(self, amounts: Mapping[str, int]) -> IntArray:
        """A pod's amounts as a row aligned with the resource columns."""
        for name in amounts:
            self.resource_column(name)
        row = np.zeros(len(self.resources), dtype=np.int64)
        for name, amount in amounts.items():
            row[self.resource_index[name]] = amount
        return row

    def _account(self, pod: Pod, node: int, sign: int, *, observed: bool = False) -> None:
        """Add (``sign`` +1) or remove a pod on a node; ``observed``: the cluster did it (a
        refresh), not a simulated Reserve/Unreserve."""
        self.pods_on_node[node].append(pod) if sign > 0 else self.pods_on_node[node].remove(pod)
        if not observed:
            self._pod_locations = None
        for name, amount in pod.requests.items():
            column = self.resource_column(name)  # may grow the arrays: look it up first
            self.requested[node, column] += sign * amount
        self.requested[node, self.resource_index["pods"]] += sign
        cpu, memory = pod.non_zero_requests
        self.non_zero_requested[node, 0] += sign * cpu
        self.non_zero_requested[node, 1] += sign * memory
        self.generation[node] += 1
        self.generations[POD_EVENT][node] += 1
        for listener in self._listeners:
            if observed and not getattr(listener, "follows_cluster_pods", True):
                continue
            if sign > 0:
                listener.pod_added(pod, node)
            else:
                listener.pod_removed(pod, node)

    def assume_pod(self, pod: Pod, node: int) -> None:
        """Account ``pod`` on ``node`` (Reserve); every plugin state follows."""
        self._account(pod, node, +1)

    def forget_pod(self, pod: Pod, node: int) -> None:
        """Undo :meth:`assume_pod` (Unreserve)."""
        self._account(pod, node, -1)

    # -- cluster changes ----------------------------------------------------------------------

    def remove_pod(self, pod: Pod) -> int:
        """A bound or assumed pod was deleted: forget it on its node; returns the node index."""
        home = self.index.get(pod.node_name)
        for node in [*([] if home is None else [home]), *range(len(self.nodes))]:
            if any(p is pod for p in self.pods_on_node[node]):
                self.forget_pod(pod, node)
                return int(node)
        raise KeyError(f"pod {pod.key} is on no node of the snapshot")

    def update_node(self, obj: Mapping[str, Any]) -> int:
        """Replace a node's object (same name): allocatable, labels, taints, cordon, ..."""
        node = parse_node(obj)
        index = self.index[node.name]
        self.nodes[index] = node
        for name in node.amounts:
            self.resource_column(name)
        self.allocatable[index] = 0
        for name, amount in node.amounts.items():
            self.allocatable[index, self.resource_index[name]] = amount
        self.unschedulable[index] = node.unschedulable
        self._labels.clear()
        self._build_taints()
        self._node_event(NODE_EVENT, index)
        return index

    def set_node_metric(self, name: str, obj: Mapping[str, Any] | None) -> int:
        """Replace (or with None remove) the NodeMetric of node ``name``."""
        return self._set_object(self.node_metrics, name, obj, NODE_METRIC_EVENT)

    def set_topology(self, name: str, obj: Mapping[str, Any] | None) -> int:
        """Replace (or with None remove) the NodeResourceTopology of node ``name``."""
        return self._set_object(self.topologies, name, obj, TOPOLOGY_EVENT)

    def _set_object(
        self,
        objects: MutableMapping[str, Mapping[str, Any]],
        name: str,
        obj: Mapping[str, Any] | None,
        kind: str,
    ) -> int:
        index: int = self.index[name]
        if obj is None:
            objects.pop(name, None)
        else:
            objects[name] = obj
        self._node_event(kind, index)
        return index

    def _node_event(self, kind: str, node: int) -> None:
        """Bump the node's generations; extensions follow in place or are rebuilt on next use."""
        self.generation[node] += 1
        self.generations[kind][node] += 1
        for key, state in list(self._extensions.items()):
            if hasattr(state, "node_event"):
                state.node_event(kind, node)
            else:
                del self._extensions[key]
                self._listeners = [other for other in self._listeners if other is not state]

    # -- refreshes ----------------------------------------------------------------------------

    def apply_changes(
        self,
        put: Iterable[Mapping[str, Any]] = (),
        delete: Iterable[Sequence[str]] = (),
        warn: Callable[[str], None] | None = None,
    ) -> None:
        """Step this snapshot and every plugin state built on it by one refresh of its cluster.

        ``put``: objects added or replaced (Nodes, Pods, NodeMetrics, NodeResourceTopologies,
        Services, controllers, Namespaces; other kinds are skipped with a ``warn``ing);
        ``delete``: ``(kind, namespace, name)`` of objects deleted. These are the two halves of
        ``policy.clusters.object_changes.SnapshotChanges``; a reference in both is replaced.

        Afterwards every evaluation answers as on ``Snapshot.from_objects`` of the refreshed
        objects (the same nodes in the same order: a deleted node's row goes, an added node
        comes last). The cost is what changed: a pod is re-accounted on its node, a Node,
        NodeMetric or NRT updates that node's row in every plugin state. Adding or deleting
        nodes re-indexes the snapshot's rows and bumps :attr:`layout` (results cached by node
        index must be dropped); plugin states follow (:class:`NodeSetListener`) or are dropped
        and rebuilt on next use.

        For a snapshot that follows a cluster: placements simulated on it (``assume_pod``) stay
        in the plugin states the way a rebuild would not have them, so simulate on a
        :meth:`copy`.
        """
        plan = plan_refresh(put, delete)
        for ignored in plan.ignored:
            (warn or (lambda m: print(m, file=sys.stderr)))(
                f"warning: ignoring {ignored}: kind not read"
            )
        with gc_paused():
            self._apply_plan(plan)

    def _apply_plan(self, plan: RefreshPlan) -> None:
        deleted = [name for name in dict.fromkeys(plan.deleted_nodes) if name in self.index]
        gone = set(deleted)
        added = [n for n in plan.nodes if n.name not in self.index or n.name in gone]
        if added or deleted:
            self._keep_node_set_listeners()
        locations = self._locations()
        for key in plan.deleted_pods:
            pod = locations.pop(key, None)
            if pod is not None:
                self._take_pod(pod)
        if deleted:
            self._delete_nodes(deleted)
        for group, namespace, name in plan.deleted_cluster_objects:
            self.cluster_objects.remove(group, namespace, name)
        for group, obj in plan.cluster_objects:
            self.cluster_objects.add(group, obj)
        self._replace_nodes([node for node in plan.nodes if node.name in self.index])
        if added:
            self._add_nodes(added)
        for name, metric in plan.node_metrics.items():
            self._put_node_object(self.node_metrics, name, metric, NODE_METRIC_EVENT)
        for name, topology in plan.topologies.items():
            self._put_node_object(self.topologies, name, topology, TOPOLOGY_EVENT)
        for put in plan.pods:
            self._put_pod(locations, put)

    def _locations(self) -> dict[PodKey, Pod]:
        if self._pod_locations is None:
            locations: dict[PodKey, Pod] = {}
            for pods in (self.pending, self.unbound, *self.pods_on_node):
                locations.update((pod_key(p.namespace, p.name), p) for p in pods)
            self._pod_locations = locations
        return self._pod_locations

    def _where(self, pod: Pod) -> int:
        """Where a pod of the cluster goes: its node's index, PENDING or UNBOUND."""
        if not pod.node_name:
            return PENDING
        return self.index.get(pod.node_name, UNBOUND)

    def _take_pod(self, pod: Pod) -> int:
        """Remove a pod of the cluster from where it is; returns its position in that list."""
        where = self._where(pod)
        pods = self._pod_list(where)
        position = next(k for k, other in enumerate(pods) if other is pod)
        if where >= 0:
            self._account(pod, where, -1, observed=True)
        else:
            del pods[position]
        return position

    def _pod_list(self, where: int) -> list[Pod]:
        if where == PENDING:
            return self.pending
        return self.unbound if where == UNBOUND else self.pods_on_node[where]

    def _put_pod(self, locations: dict[PodKey, Pod], pod: Pod) -> None:
        """Add or replace a pod (a replaced pod keeps its place, as a rebuild orders it)."""
        key = pod_key(pod.namespace, pod.name)
        old = locations.pop(key, None)
        where = self._where(pod)
        same_place = old is not None and self._where(old) == where
        position = None if old is None else self._take_pod(old)
        if pod.is_terminal:
            return  # the scheduler's informer drops Succeeded/Failed pods
        pods = self._pod_list(where)
        if where >= 0:
            self._account(pod, where, +1, observed=True)
            pods.pop()
        if same_place and position is not None:
            pods.insert(position, pod)
        else:
            pods.append(pod)
        locations[key] = pod

    def _replace_nodes(self, nodes: list[Node]) -> None:
        """New objects of known nodes: rows first, then one taint and label rebuild, then each
        node's event (plugin states may read the rebuilt columns)."""
        if not nodes:
            return
        indices = [self.index[node.name] for node in nodes]
        for index, node in zip(indices, nodes, strict=True):
            self.nodes[index] = node
            self._set_node_row(index, node)
            self._set_taints(index, node.taints)
        self._labels.clear()
        for index in indices:
            self._node_event(NODE_EVENT, index)

    def _set_node_row(self, index: int, node: Node) -> None:
        for name in node.amounts:
            self.resource_column(name)
        self.allocatable[index] = 0
        for name, amount in node.amounts.items():
            self.allocatable[index, self.resource_index[name]] = amount
        self.unschedulable[index] = node.unschedulable

    def _put_node_object(
        self,
        objects: MutableMapping[str, Mapping[str, Any]],
        name: str,
        obj: Mapping[str, Any] | None,
        kind: str,
    ) -> None:
        """A NodeMetric or NRT: kept by node name even for a node the snapshot lacks (yet)."""
        if name in self.index:
            self._set_object(objects, name, obj, kind)
        elif obj is None:
            objects.pop(name, None)
        else:
            objects[name] = obj

    def _keep_node_set_listeners(self) -> None:
        """Plugin states that cannot follow nodes coming and going are dropped (rebuilt once on
        next use) rather than told about each change first."""
        for key, state in list(self._extensions.items()):
            if not (hasattr(state, "nodes_deleted") and hasattr(state, "nodes_added")):
                del self._extensions[key]
                self._listeners = [other for other in self._listeners if other is not state]

    def _delete_nodes(self, names: list[str]) -> None:
        """Delete node rows; their pods become unbound (bound to a node the snapshot lacks)."""
        gone = {self.index[name] for name in names}
        for index in sorted(gone):
            pods = list(self.pods_on_node[index])
            for pod in pods:
                self._account(pod, index, -1, observed=True)
            self.unbound.extend(pods)
        keep = np.ones(len(self.nodes), dtype=bool)
        keep[list(gone)] = False
        self.nodes = [node for i, node in enumerate(self.nodes) if keep[i]]
        self.pods_on_node = [pods for i, pods in enumerate(self.pods_on_node) if keep[i]]
        self.generation = self.generation[keep]
        self.generations = {kind: array[keep] for kind, array in self.generations.items()}
        self.unschedulable = self.unschedulable[keep]
        self.allocatable = self.allocatable[keep]
        self.requested = self.requested[keep]
        self.non_zero_requested = self.non_zero_requested[keep]
        self._relayout()
        for state in list(self._extensions.values()):
            state.nodes_deleted(keep)

    def _add_nodes(self, nodes: list[Node]) -> None:
        """Append node rows; pods already bound to those names (unbound so far) move onto them."""
        start = len(self.nodes)
        self.nodes.extend(nodes)
        self.pods_on_node.extend([] for _ in nodes)
        extra = len(nodes)
        self.generation = np.concatenate([self.generation, np.zeros(extra, np.int64)])
        self.generations = {
            kind: np.concatenate([array, np.zeros(extra, np.int64)])
            for kind, array in self.generations.items()
        }
        self.unschedulable = np.concatenate([self.unschedulable, np.zeros(extra, bool)])
        self.allocatable = np.vstack(
            [self.allocatable, np.zeros((extra, len(self.resources)), np.int64)]
        )
        self.requested = np.vstack(
            [self.requested, np.zeros((extra, len(self.resources)), np.int64)]
        )
        self.non_zero_requested = np.vstack(
            [self.non_zero_requested, np.zeros((extra, 2), np.int64)]
        )
        self._relayout()
        for offset, node in enumerate(nodes):
            self._set_node_row(start + offset, node)
        for state in list(self._extensions.values()):
            state.nodes_added(extra)
        arriving = [pod for pod in self.unbound if pod.node_name in self.index]
        self.unbound = [pod for pod in self.unbound if pod.node_name not in self.index]
        for pod in arriving:
            self._account(pod, self.index[pod.node_name], +1, observed=True)

    def _relayout(self) -> None:
        self.node_names = [node.name for node in self.nodes]
        self.index = {name: i for i, name in enumerate(self.node_names)}
        self._labels.clear()
        self._build_taints()
        self.layout += 1

    def add_cluster_objects(self, objects: Iterable[Mapping[str, Any]]) -> None:
        """Register Services, controllers or Namespaces (e.g. a simulated workload's
        ReplicaSets); other kinds are ignored. Plugin state reading them is per cycle."""
        for obj in objects:
            group = _group(str(obj.get("kind", "")), str(obj.get("apiVersion", "")))
            if group in CLUSTER_OBJECT_KINDS:
                self.cluster_objects.add(group, obj)

    def copy(self) -> Snapshot:
        """An independent snapshot in the same state, plugin extensions included.

        Node and Pod objects and the packed NodeMetric / NRT objects are shared (never mutated);
        arrays, lists and plugin state are copied, so placements on the copy leave this one
        untouched (what-if comparisons start from one snapshot).
        """
        shared: dict[int, Any] = {id(node): node for node in self.nodes}
        for pods in (self.pending, self.unbound, *self.pods_on_node):
            shared.update((id(pod), pod) for pod in pods)
        with gc_paused():
            duplicate: Snapshot = copy.deepcopy(self, shared)
        return duplicate

    def variant(
        self, nodes: Iterable[Mapping[str, Any]] = (), removed: Iterable[tuple[Pod, int]] = ()
    ) -> Snapshot:
        """A cheap what-if of a few changes: ``nodes`` replace the Node objects of the same
        names and the ``removed`` (pod, node index) pairs are gone; this snapshot is untouched.

        Everything else is shared, read-only: plugin state whose class says it does not read
        node labels, taints or the cordon (``reads_node_labels = False``) is reused as it is,
        and so still counts the removed pods (stricter, never looser, for the usage, limit and
        port checks it serves), or, when it has ``for_variant(variant, nodes)``, as that
        answers for the replaced nodes (LoadAware's thresholds read their annotations);
        every other state is built again on the variant. Unlike
        :meth:`copy` (seconds on 5,000 nodes) this costs little, but the variant must not be
        changed further (no :meth:`assume_pod`).
        """
        other: Snapshot = copy.copy(self)
        other.nodes = list(self.nodes)
        other.generation = self.generation.copy()
        other.generations = {kind: gens.copy() for kind, gens in self.generations.items()}
        other.unschedulable = self.unschedulable.copy()
        replaced: list[int] = []
        for obj in nodes:
            node = parse_node(obj)
            index = self.index[node.name]
            replaced.append(index)
            other.nodes[index] = node
            other.unschedulable[index] = node.unschedulable
            other.generation[index] += 1
            other.generations[NODE_EVENT][index] += 1
        other._labels = {}
        other._build_taints()
        removed = list(removed)
        if removed:
            other.requested = self.requested.copy()
            other.non_zero_requested = self.non_zero_requested.copy()
            other.pods_on_node = list(self.pods_on_node)
            for pod, index in removed:
                other.pods_on_node[index] = [p for p in other.pods_on_node[index] if p is not pod]
                for name, amount in (*pod.requests.items(), ("pods", 1)):
                    other.requested[index, other.resource_index[name]] -= amount
                other.non_zero_requested[index] -= pod.non_zero_requests
                other.generation[index] += 1
                other.generations[POD_EVENT][index] += 1
        kept = {
            key: _on_variant(state, other, replaced)
            for key, state in self._extensions.items()
            if getattr(state, "reads_node_labels", True) is False
        }
        other._extensions = kept
        other._listeners = [
            state for state in self._listeners if any(state is k for k in kept.values())
        ]
        return other

    # -- plugin state -------------------------------------------------------------------------

    def extension(self, key: str, factory: Callable[[Snapshot], T]) -> T:
        """Plugin-specific derived state, built once per snapshot.

        If the state implements :class:`PodListener` it is kept in step with pod placements.
        """
        if key not in self._extensions:
            state = factory(self)
            self.states_built += 1
            self._extensions[key] = state
            if hasattr(state, "pod_added") and hasattr(state, "pod_removed"):
                self._listeners.append(state)
        result: T = self._extensions[key]
        return result

    @contextmanager
    def transient_extensions(self) -> Iterator[None]:
        """Drop the plugin state built inside the block when it ends: state for args tried
        once (a what-if threshold) is not kept on a snapshot that is cached and reused."""
        before = set(self._extensions)
        try:
            yield
        finally:
            for key in set(self._extensions) - before:
                state = self._extensions.pop(key, None)
                self._listeners = [other for other in self._listeners if other is not state]

    # -- labels -------------------------------------------------------------------------------

    def by_name(self) -> IntArray:
        """Node indices in name order: every explanation lists nodes by name, and sorting
        5,000 names for each one cost milliseconds. Kept until nodes come or go (:attr:`layout`)."""
        return self._name_order()[0]

    def name_rank(self) -> IntArray:
        """Each node's place in name order (see :meth:`by_name`)."""
        return self._name_order()[1]

    def _name_order(self) -> tuple[IntArray, IntArray]:
        kept = self._by_name
        if kept is None or kept[0] != self.layout or len(kept[1]) != len(self.node_names):
            names = self.node_names
            order = np.array(sorted(range(len(names)), key=names.__getitem__), dtype=np.int64)
            rank = np.empty(len(order), dtype=np.int64)
            rank[order] = np.arange(len(order))
            kept = self._by_name = (self.layout, order, rank)
        return kept[1], kept[2]

    def label_column(self, key: str) -> LabelColumn:
        """Codes of label ``key`` per node, for vectorized selector matching."""
        column = self._labels.get(key)
        if column is None:
            vocabulary: dict[str, int] = {}
            codes = np.fromiter(
                (
                    vocabulary.setdefault(n.labels[key], len(vocabulary)) if key in n.labels else -1
                    for n in self.nodes
                ),
                dtype=np.int32,
                count=len(self.nodes),
            )
            column = self._labels[key] = LabelColumn(codes, vocabulary)
        return column

    def __len__(self) -> int:
        return len(self.nodes)
