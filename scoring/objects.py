"""Typed views of the Kubernetes objects the engine reads (v1 Node and Pod).

Objects arrive as the JSON that ``kubectl get -o json`` prints. Parsing validates what the engine
relies on (:mod:`scoring.object_fields`); a pod's containers are :mod:`scoring.containers`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from sys import intern
from typing import Any

from scoring import podresources
from scoring.containers import (
    Container,
    ContainerPort,
    PodResources,
    parse_container,
    pod_resources,
)
from scoring.goint import INT64_MAX
from scoring.lazy import cached_property
from scoring.object_fields import (
    ObjectError,
    ResourceList,
    as_list,
    describe,
    mapping,
    parse_resource_list,
)
from scoring.packed import Packed, pack, unpack
from scoring.sharing import EMPTY, ConditionTriple, condition_triples, shared, string_map
from scoring.timeutil import parse_time

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
DEFAULT_SCHEDULER = "default-scheduler"


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str
    value: str
    effect: str

    def tolerates(self, taint: Taint) -> bool:
        """``Toleration.ToleratesTaint`` (k8s.io/api/core/v1/toleration.go)."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return self.operator == "Exists"


@dataclass(frozen=True, slots=True)
class Condition:
    status: str
    last_transition: datetime | None


@dataclass(eq=False, slots=True)
class Pod:
    """A v1 Pod reduced to the fields scheduling depends on (plus the object as read).

    Slotted, and its resource values shared with its replicas: a 5,000-node cluster has 40,000.
    """

    namespace: str
    name: str
    uid: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    node_name: str
    scheduler_name: str
    priority: int | None
    phase: str
    node_selector: Mapping[str, str]
    affinity: Mapping[str, Any]
    tolerations: tuple[Toleration, ...]
    resources: PodResources
    owner_references: tuple[Mapping[str, Any], ...]
    status_qos_class: str
    # The object as read (:attr:`raw`), packed: read seldom, and most of a Pod's memory. None
    # for the bound pods of a snapshot, which nothing reads it of (:func:`parse_cluster_pod`).
    source: Packed | None = field(repr=False)
    # ``spec.topologySpreadConstraints`` as given (PodTopologySpread parses them per cycle).
    topology_spread_constraints: tuple[Mapping[str, Any], ...] = ()
    terminating: bool = False  # ``metadata.deletionTimestamp`` is set
    creation_timestamp: str = ""
    volumes: tuple[Mapping[str, Any], ...] = ()  # ``spec.volumes`` (the descheduler reads them)
    # ``status.conditions``: shared (type, status, time) triples when well formed
    # (:func:`sharing.condition_triples`), else as given; parsed on use.
    status_conditions: Any = field(default=None, repr=False)

    @property
    def raw(self) -> Mapping[str, Any]:
        """The object as read: a new copy on each use (callers may keep or change it)."""
        if self.source is None:
            raise LookupError(f"Pod {self.key}: a snapshot keeps pending pods' manifests only")
        return unpack(self.source)

    @property
    def conditions(self) -> Mapping[str, Condition]:
        """Status conditions by type, parsed on each use (kept parsed, 40,000 pods' would cost
        tens of MiB for the one plugin that reads them, once per pod)."""
        given = self.status_conditions
        if type(given) is tuple:
            try:
                return _conditions_of(given)
            except ValueError:  # a bad time: named below
                given = [
                    dict(zip(("type", "status", "lastTransitionTime"), t, strict=True))
                    for t in given
                ]
        described = {"kind": "Pod", "metadata": {"namespace": self.namespace, "name": self.name}}
        return _parse_conditions(described, given)

    def condition(self, kind: str) -> Condition | None:
        """The status condition of type ``kind`` (the last one given, as :attr:`conditions`)."""
        given = self.status_conditions
        if type(given) is tuple:
            found = None
            for triple in given:
                if triple[0] == kind:
                    found = triple
            if found is None:
                return None
            stamp = found[2]
            try:
                return _condition(str(found[1]), parse_time(stamp) if stamp else None)
            except ValueError:
                pass  # named below
        return self.conditions.get(kind)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def is_terminal(self) -> bool:
        return self.phase in TERMINAL_PHASES

    @property
    def containers(self) -> tuple[Container, ...]:
        return self.resources.containers

    @property
    def init_containers(self) -> tuple[Container, ...]:
        return self.resources.init_containers

    @property
    def overhead(self) -> ResourceList:
        return self.resources.overhead

    @property
    def requests(self) -> dict[str, int]:
        """Scheduler-integer requests (``PodRequests``): cpu in millicores, others ``Value()``."""
        return self.resources.requests

    @property
    def non_zero_requests(self) -> tuple[int, int]:
        """(cpu millicores, memory bytes) with 100m / 200Mi for containers missing the key."""
        return self.resources.non_zero_requests

    @property
    def limits(self) -> dict[str, int]:
        """Scheduler-integer limits (``PodLimits``)."""
        return self.resources.limits

    @property
    def qos_class(self) -> str:
        """``status.qosClass`` when set, else computed by the Kubernetes QoS rules."""
        return self.status_qos_class or self.resources.qos_class

    @property
    def host_ports(self) -> tuple[ContainerPort, ...]:
        """``schedutil.GetHostPorts``: sidecar (restartable) init containers, then containers."""
        return self.resources.host_ports

    @property
    def controller(self) -> Mapping[str, Any] | None:
        """The ownerReference with ``controller: true``, if any."""
        return next((o for o in self.owner_references if o.get("controller")), None)


def _parse_tolerations(obj: Mapping[str, Any], raw: Any) -> tuple[Toleration, ...]:
    out = []
    for i, item in enumerate(as_list(obj, raw, "spec.tolerations")):
        t = mapping(obj, item, f"spec.tolerations[{i}]")
        out.append(
            Toleration(
                key=str(t.get("key") or ""),
                operator=str(t.get("operator") or ""),
                value=str(t.get("value") or ""),
                effect=str(t.get("effect") or ""),
            )
        )
    return tuple(out)


def _conditions_of(triples: tuple[ConditionTriple, ...]) -> dict[str, Condition]:
    """Parsed conditions, one dict per distinct set (``ValueError`` on a bad time)."""
    return {
        str(kind): _condition(str(status), parse_time(stamp) if stamp else None)
        for kind, status, stamp in triples
    }


def _parse_conditions(obj: Mapping[str, Any], raw: Any) -> dict[str, Condition]:
    out = {}
    for i, item in enumerate(as_list(obj, raw, "status.conditions")):
        c = mapping(obj, item, f"status.conditions[{i}]")
        stamp = c.get("lastTransitionTime")
        try:
            when = parse_time(stamp) if stamp else None
        except ValueError as exc:
            raise ObjectError(f"{describe(obj)}: status.conditions[{i}]: {exc}") from None
        out[str(c.get("type", ""))] = _condition(str(c.get("status", "")), when)
    return out


# Equal conditions are one object (immutable): 40,000 pods' 160,000 conditions share about
# 17,000 (status, time) pairs, which a stored engine snapshot then holds once each.
_condition = lru_cache(maxsize=65536)(Condition)


def parse_pod(obj: Mapping[str, Any], *, keep_source: bool = True) -> Pod:
    """Read a v1 Pod; raises :class:`ObjectError` naming the field on bad input.

    ``keep_source=False``: without the object as read (:attr:`Pod.raw`), as a snapshot holds its
    bound pods (:func:`parse_cluster_pod`).
    """
    meta = mapping(obj, obj.get("metadata"), "metadata")
    spec = mapping(obj, obj.get("spec"), "spec")
    status = mapping(obj, obj.get("status"), "status")
    if not meta.get("name"):
        raise ObjectError(f"{describe(obj)}: metadata.name: required")
    host_network = bool(spec.get("hostNetwork"))
    priority = spec.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)):
        raise ObjectError(f"{describe(obj)}: spec.priority: expected an integer, got {priority!r}")
    return Pod(
        # Interned: LoadAware's NodeMetrics name every pod again (one string each, not two).
        namespace=intern(str(meta.get("namespace") or "default")),
        name=intern(str(meta["name"])),
        uid=str(meta.get("uid") or ""),  # (unique: not worth interning)
        labels=string_map(mapping(obj, meta.get("labels"), "labels")),
        annotations=string_map(mapping(obj, meta.get("annotations"), "metadata.annotations")),
        node_name=intern(str(spec.get("nodeName") or "")),
        scheduler_name=intern(str(spec.get("schedulerName") or DEFAULT_SCHEDULER)),
        priority=priority,
        phase=intern(str(status.get("phase") or "")),
        node_selector=string_map(mapping(obj, spec.get("nodeSelector"), "spec.nodeSelector")),
        affinity=shared(mapping(obj, spec.get("affinity"), "spec.affinity")) or EMPTY,
        tolerations=_parse_tolerations(obj, spec.get("tolerations")),
        resources=pod_resources(
            tuple(
                parse_container(obj, c, f"spec.containers[{i}]", host_network=host_network)
                for i, c in enumerate(as_list(obj, spec.get("containers"), "spec.containers"))
            ),
            tuple(
                parse_container(obj, c, f"spec.initContainers[{i}]", host_network=host_network)
                for i, c in enumerate(
                    as_list(obj, spec.get("initContainers"), "spec.initContainers")
                )
            ),
            parse_resource_list(obj, spec.get("overhead"), "spec.overhead"),
        ),
        owner_references=tuple(
            shared(mapping(obj, o, f"metadata.ownerReferences[{i}]"))
            for i, o in enumerate(as_list(obj, meta.get("ownerReferences"), "ownerReferences"))
        ),
        status_qos_class=intern(str(status.get("qosClass") or "")),
        source=pack(obj) if keep_source else None,
        topology_spread_constraints=tuple(
            shared(mapping(obj, c, f"spec.topologySpreadConstraints[{i}]"))
            for i, c in enumerate(
                as_list(
                    obj, spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints"
                )
            )
        ),
        terminating=meta.get("deletionTimestamp") is not None,
        creation_timestamp=intern(str(meta.get("creationTimestamp") or "")),
        volumes=_volumes(spec.get("volumes")),
        status_conditions=condition_triples(status.get("conditions")),
    )


def parse_cluster_pod(obj: Mapping[str, Any]) -> Pod:
    """A pod of a cluster snapshot: a bound pod without the object as read (40,000 manifests
    that nothing reads are most of a 5,000-node snapshot's memory and of its build time), a
    pending one with it (it is offered to evaluate and what-if as it is)."""
    spec = obj.get("spec")
    bound = isinstance(spec, Mapping) and bool(spec.get("nodeName"))
    return parse_pod(obj, keep_source=not bound)


def _volumes(value: Any) -> tuple[Mapping[str, Any], ...]:
    """``spec.volumes`` as given, skipping what is not an object (the descheduler reads them
    leniently, as it always has)."""
    if not isinstance(value, list):
        return ()
    return tuple(shared(v) for v in value if isinstance(v, Mapping))


@dataclass(frozen=True, slots=True)
class NodeImage:
    """One entry of ``status.images``: every name the image is known by, and its size."""

    names: tuple[str, ...]
    size_bytes: int


@dataclass(eq=False)
class Node:
    """A v1 Node reduced to what scheduling reads (plus the raw object)."""

    name: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    unschedulable: bool
    taints: tuple[Taint, ...]
    allocatable: ResourceList
    images: tuple[NodeImage, ...]
    # The object as read (:attr:`raw`), packed, as a Pod's.
    source: Packed = field(repr=False)
    ready: bool = True  # no ``Ready`` condition that is not ``True`` (``nodeutil.IsReady``)

    @property
    def raw(self) -> Mapping[str, Any]:
        """The object as read: a new copy on each use (callers may keep or change it)."""
        return unpack(self.source)

    @cached_property
    def amounts(self) -> dict[str, int]:
        """Allocatable as scheduler integers (cpu millicores, others ``Value()``)."""
        return podresources.to_amounts(self.allocatable)


def parse_node(obj: Mapping[str, Any]) -> Node:
    """Read a v1 Node; raises :class:`ObjectError` naming the field on bad input."""
    meta = mapping(obj, obj.get("metadata"), "metadata")
    spec = mapping(obj, obj.get("spec"), "spec")
    status = mapping(obj, obj.get("status"), "status")
    if not meta.get("name"):
        raise ObjectError(f"{describe(obj)}: metadata.name: required")
    taints = []
    for i, item in enumerate(as_list(obj, spec.get("taints"), "spec.taints")):
        t = mapping(obj, item, f"spec.taints[{i}]")
        if not t.get("key") or not t.get("effect"):
            raise ObjectError(f"{describe(obj)}: spec.taints[{i}]: key and effect are required")
        taints.append(Taint(str(t["key"]), str(t.get("value") or ""), str(t["effect"])))
    # The scheduler reads status.allocatable only (NodeInfo.SetNode); capacity is ignored.
    return Node(
        name=str(meta["name"]),
        labels={str(k): str(v) for k, v in mapping(obj, meta.get("labels"), "labels").items()},
        annotations={
            str(k): str(v)
            for k, v in mapping(obj, meta.get("annotations"), "metadata.annotations").items()
        },
        unschedulable=bool(spec.get("unschedulable")),
        taints=tuple(taints),
        allocatable=parse_resource_list(obj, status.get("allocatable"), "status.allocatable"),
        images=_parse_images(obj, status.get("images")),
        source=pack(obj),
        ready=_ready(status.get("conditions")),
    )


def _ready(conditions: Any) -> bool:
    """Every ``Ready`` condition is ``True`` (none counts as ready), read leniently as the
    descheduler's ``nodeutil.ReadyNodes`` does."""
    if not isinstance(conditions, list):
        return True
    return all(
        c.get("status") == "True"
        for c in conditions
        if isinstance(c, Mapping) and c.get("type") == "Ready"
    )


def _parse_images(obj: Mapping[str, Any], raw: Any) -> tuple[NodeImage, ...]:
    """``status.images`` (``[]ContainerImage``): names are strings, ``sizeBytes`` an int64 >= 0
    (omitted means 0, as Go's zero value)."""
    images = []
    for i, item in enumerate(as_list(obj, raw, "status.images")):
        path = f"status.images[{i}]"
        entry = mapping(obj, item, path)
        names = as_list(obj, entry.get("names"), f"{path}.names")
        for j, name in enumerate(names):
            if not isinstance(name, str):
                raise ObjectError(
                    f"{describe(obj)}: {path}.names[{j}]: expected a string, got {name!r}"
                )
        size = entry.get("sizeBytes") or 0
        if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= INT64_MAX:
            raise ObjectError(
                f"{describe(obj)}: {path}.sizeBytes: expected an integer from 0 to "
                f"{INT64_MAX}, got {size!r}"
            )
        images.append(NodeImage(tuple(names), size))
    return tuple(images)
