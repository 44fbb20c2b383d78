"""Typed views of the Kubernetes objects the engine reads (v1 Node and Pod).

Objects arrive as the JSON that ``kubectl get -o json`` prints. Parsing validates what the engine
relies on and raises :class:`ObjectError` naming the object and the field, so a bad manifest is a
clear input error rather than a crash deep inside a plugin. Quantities are kept exact
(integer nano-units) until a plugin asks for the integer the scheduler uses.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from scoring import podresources
from scoring.errors import InputError
from scoring.goint import INT64_MAX, fits_int64
from scoring.lazy import cached_property
from scoring.quantity import QuantityError, parse_nanos, scheduler_amount
from scoring.timeutil import parse_time


def _by_constructor(self: Any) -> tuple[type, tuple[Any, ...]]:
    """``__reduce__`` of a frozen slotted dataclass: its fields, given back to its constructor.
    The dataclass default restores slots in Python, field by field; a stored engine snapshot
    (policy.clusters.prepared_engine) holds 200,000 of these on 5,000 nodes, and loads in
    two-thirds of the time this way."""
    return type(self), tuple(getattr(self, name) for name in self.__slots__)


_RAW_JSON = "_raw_json"  # a pickled Pod's raw object, as JSON text (Pod.__getstate__)

ResourceList = dict[str, int]  # exact quantities in nano-units (see quantity.parse_nanos)

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
DEFAULT_SCHEDULER = "default-scheduler"


class ObjectError(InputError):
    """A Kubernetes object the engine cannot read; the message names object and field."""


def _describe(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    name = meta.get("name", "<unnamed>")
    ns = meta.get("namespace")
    return f"{obj.get('kind', 'object')} {ns + '/' if ns else ''}{name}"


def _mapping(obj: Mapping[str, Any], value: Any, path: str) -> Mapping[str, Any]:
    if type(value) is dict:  # decoded JSON: skips the slow ABC check (millions of calls)
        return value
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ObjectError(f"{_describe(obj)}: {path}: expected an object, got {value!r}")
    return value


def _list(obj: Mapping[str, Any], value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ObjectError(f"{_describe(obj)}: {path}: expected a list, got {value!r}")
    return value


def parse_resource_list(obj: Mapping[str, Any], value: Any, path: str) -> ResourceList:
    """Parse a ``ResourceList`` (name → quantity), naming the field on a bad quantity.

    As the API server validates them (``ValidateResourceQuantityValue``), amounts are never
    negative; and each must fit the int64 the scheduler counts it in (millicores for cpu,
    whole units otherwise), or no sum over it means anything.
    """
    out: ResourceList = {}
    for name, raw in _mapping(obj, value, path).items():
        name = str(name)
        checked = _checked_text(name, raw) if type(raw) is str else _checked(name, raw)
        if isinstance(checked, str):
            raise ObjectError(f"{_describe(obj)}: {path}.{name}: {checked}")
        out[name] = checked
    return out


def _checked(name: str, raw: Any) -> int | str:
    """The amount in nano-units, or why it is refused."""
    try:
        nanos = parse_nanos(raw)
    except QuantityError as exc:
        return str(exc)
    if nanos < 0:
        return "must be greater than or equal to 0"
    if not fits_int64(scheduler_amount(name, nanos)):
        unit = "millicores" if name == "cpu" else "units"
        return f"{raw} is more than the scheduler can count ({INT64_MAX} {unit})"
    return nanos


# Pods repeat a few (name, quantity) pairs: 140,000 resource lists of a 5,000-node cluster.
_checked_text = lru_cache(maxsize=65536)(_checked)


@dataclass(frozen=True, slots=True)
class Taint:
    __reduce__ = _by_constructor

    key: str
    value: str
    effect: str


@dataclass(frozen=True, slots=True)
class Toleration:
    __reduce__ = _by_constructor

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
class ContainerPort:
    __reduce__ = _by_constructor

    host_port: int
    protocol: str
    host_ip: str


@dataclass(frozen=True, slots=True)
class Container:
    __reduce__ = _by_constructor

    name: str
    image: str
    requests: ResourceList
    limits: ResourceList
    ports: tuple[ContainerPort, ...]
    restartable: bool  # an init container with restartPolicy: Always (a sidecar)


def _parse_container(
    obj: Mapping[str, Any], raw: Any, path: str, *, host_network: bool = False
) -> Container:
    spec = _mapping(obj, raw, path)
    resources = _mapping(obj, spec.get("resources"), f"{path}.resources")
    requests = parse_resource_list(obj, resources.get("requests"), f"{path}.resources.requests")
    limits = parse_resource_list(obj, resources.get("limits"), f"{path}.resources.limits")
    # API-server defaulting (pkg/apis/core/v1/defaults.go SetDefaults_Container... via
    # defaultRequests): a limit without a request defaults the request to the limit.
    for name, amount in limits.items():
        requests.setdefault(name, amount)
    ports = []
    for j, port in enumerate(_list(obj, spec.get("ports"), f"{path}.ports")):
        port = _mapping(obj, port, f"{path}.ports[{j}]")
        host_port = port.get("hostPort") or 0
        if host_network and not host_port:
            # SetDefaults_PodSpec / defaultHostNetworkPorts (pkg/apis/core/v1/defaults.go):
            # with hostNetwork every container port is also a host port.
            host_port = port.get("containerPort") or 0
        if not isinstance(host_port, int) or not 0 <= host_port <= 65535:
            where = f"{_describe(obj)}: {path}.ports[{j}].hostPort"
            raise ObjectError(f"{where}: invalid {host_port!r}")
        if host_port:
            protocol = str(port.get("protocol") or "TCP")
            ports.append(ContainerPort(host_port, protocol, str(port.get("hostIP") or "")))
    image = spec.get("image") or ""
    if not isinstance(image, str):
        raise ObjectError(f"{_describe(obj)}: {path}.image: expected a string, got {image!r}")
    return Container(
        name=str(spec.get("name", "")),
        image=image,
        requests=requests,
        limits=limits,
        ports=tuple(ports),
        restartable=spec.get("restartPolicy") == "Always",
    )


@dataclass(frozen=True, slots=True)
class Condition:
    __reduce__ = _by_constructor

    status: str
    last_transition: datetime | None


@dataclass(eq=False)
class Pod:
    """A v1 Pod reduced to the fields scheduling depends on (plus the raw object)."""

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
    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...]
    overhead: ResourceList
    owner_references: tuple[Mapping[str, Any], ...]
    status_qos_class: str
    raw: Mapping[str, Any] = field(repr=False)
    # ``spec.topologySpreadConstraints`` as given (PodTopologySpread parses them per cycle).
    topology_spread_constraints: tuple[Mapping[str, Any], ...] = ()

    @cached_property
    def conditions(self) -> Mapping[str, Condition]:
        """Status conditions by type; parsed on first use (only load-aware plugins read them)."""
        status = _mapping(self.raw, self.raw.get("status"), "status")
        return _parse_conditions(self.raw, status.get("conditions"))

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def is_terminal(self) -> bool:
        return self.phase in TERMINAL_PHASES

    @cached_property
    def requests(self) -> dict[str, int]:
        """Scheduler-integer requests (``PodRequests``): cpu in millicores, others ``Value()``."""
        return podresources.to_amounts(podresources.pod_requests(self))

    @cached_property
    def non_zero_requests(self) -> tuple[int, int]:
        """(cpu millicores, memory bytes) with 100m / 200Mi for containers missing the key."""
        return podresources.non_zero_cpu_memory(self)

    @cached_property
    def limits(self) -> dict[str, int]:
        """Scheduler-integer limits (``PodLimits``)."""
        return podresources.to_amounts(podresources.pod_limits(self))

    @cached_property
    def qos_class(self) -> str:
        """``status.qosClass`` when set, else computed by the Kubernetes QoS rules."""
        return self.status_qos_class or podresources.compute_qos(self)

    @cached_property
    def host_ports(self) -> tuple[ContainerPort, ...]:
        """``schedutil.GetHostPorts``: sidecar (restartable) init containers, then containers."""
        sidecars = tuple(c for c in self.init_containers if c.restartable)
        return tuple(p for c in (*sidecars, *self.containers) for p in c.ports)

    @cached_property
    def terminating(self) -> bool:
        """``metadata.deletionTimestamp`` is set (PodTopologySpread does not count such pods)."""
        meta = self.raw.get("metadata")
        return isinstance(meta, Mapping) and meta.get("deletionTimestamp") is not None

    @property
    def controller(self) -> Mapping[str, Any] | None:
        """The ownerReference with ``controller: true``, if any."""
        return next((o for o in self.owner_references if o.get("controller")), None)

    def __getstate__(self) -> dict[str, Any]:
        """Pickled (a prepared engine snapshot, policy/clusters/prepared_engine.py) with the
        raw object as JSON text, parsed again on first use: 40,000 pods' objects are a third
        of a 5,000-node snapshot's pickle and 40% of its loading time, and a parsed pod whose
        derived values were computed seldom reads them again."""
        state = dict(self.__dict__)
        if _RAW_JSON in state:  # unpickled so: the text is the raw object still
            state.pop("raw", None)
            return state
        try:
            state[_RAW_JSON] = json.dumps(state["raw"], separators=(",", ":"))
        except (TypeError, ValueError):  # not JSON (a YAML timestamp, say): kept as it is
            return state
        # (Stored snapshots' objects are decoded JSON, so the text gives back an equal object;
        # only a non-string key, which YAML allows and JSON does not, would come back as text.)
        del state["raw"]
        return state

    if not TYPE_CHECKING:  # (for the type checker, ``raw`` is the field above)

        def __getattr__(self, name: str) -> Any:
            """``raw`` of a pod unpickled with it as JSON text (:meth:`__getstate__`)."""
            if name != "raw" or _RAW_JSON not in self.__dict__:
                raise AttributeError(name)  # (unpickling asks for __setstate__ 40,000 times)
            return self.__dict__.setdefault("raw", json.loads(self.__dict__[_RAW_JSON]))


def _parse_tolerations(obj: Mapping[str, Any], raw: Any) -> tuple[Toleration, ...]:
    out = []
    for i, item in enumerate(_list(obj, raw, "spec.tolerations")):
        t = _mapping(obj, item, f"spec.tolerations[{i}]")
        out.append(
            Toleration(
                key=str(t.get("key") or ""),
                operator=str(t.get("operator") or ""),
                value=str(t.get("value") or ""),
                effect=str(t.get("effect") or ""),
            )
        )
    return tuple(out)


def _parse_conditions(obj: Mapping[str, Any], raw: Any) -> dict[str, Condition]:
    out = {}
    for i, item in enumerate(_list(obj, raw, "status.conditions")):
        c = _mapping(obj, item, f"status.conditions[{i}]")
        stamp = c.get("lastTransitionTime")
        try:
            when = parse_time(stamp) if stamp else None
        except ValueError as exc:
            raise ObjectError(f"{_describe(obj)}: status.conditions[{i}]: {exc}") from None
        out[str(c.get("type", ""))] = _condition(str(c.get("status", "")), when)
    return out


# Equal conditions are one object (immutable): 40,000 pods' 160,000 conditions share about
# 17,000 (status, time) pairs, which a stored engine snapshot then holds once each.
_condition = lru_cache(maxsize=65536)(Condition)


def parse_pod(obj: Mapping[str, Any]) -> Pod:
    """Read a v1 Pod; raises :class:`ObjectError` naming the field on bad input."""
    meta = _mapping(obj, obj.get("metadata"), "metadata")
    spec = _mapping(obj, obj.get("spec"), "spec")
    status = _mapping(obj, obj.get("status"), "status")
    if not meta.get("name"):
        raise ObjectError(f"{_describe(obj)}: metadata.name: required")
    host_network = bool(spec.get("hostNetwork"))
    priority = spec.get("priority")
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)):
        raise ObjectError(f"{_describe(obj)}: spec.priority: expected an integer, got {priority!r}")
    return Pod(
        namespace=str(meta.get("namespace") or "default"),
        name=str(meta["name"]),
        uid=str(meta.get("uid") or ""),
        labels={str(k): str(v) for k, v in _mapping(obj, meta.get("labels"), "labels").items()},
        annotations={
            str(k): str(v)
            for k, v in _mapping(obj, meta.get("annotations"), "metadata.annotations").items()
        },
        node_name=str(spec.get("nodeName") or ""),
        scheduler_name=str(spec.get("schedulerName") or DEFAULT_SCHEDULER),
        priority=priority,
        phase=str(status.get("phase") or ""),
        node_selector={
            str(k): str(v)
            for k, v in _mapping(obj, spec.get("nodeSelector"), "spec.nodeSelector").items()
        },
        affinity=_mapping(obj, spec.get("affinity"), "spec.affinity"),
        tolerations=_parse_tolerations(obj, spec.get("tolerations")),
        containers=tuple(
            _parse_container(obj, c, f"spec.containers[{i}]", host_network=host_network)
            for i, c in enumerate(_list(obj, spec.get("containers"), "spec.containers"))
        ),
        init_containers=tuple(
            _parse_container(obj, c, f"spec.initContainers[{i}]", host_network=host_network)
            for i, c in enumerate(_list(obj, spec.get("initContainers"), "spec.initContainers"))
        ),
        overhead=parse_resource_list(obj, spec.get("overhead"), "spec.overhead"),
        owner_references=tuple(
            _mapping(obj, o, f"metadata.ownerReferences[{i}]")
            for i, o in enumerate(_list(obj, meta.get("ownerReferences"), "ownerReferences"))
        ),
        status_qos_class=str(status.get("qosClass") or ""),
        raw=obj,
        topology_spread_constraints=tuple(
            _mapping(obj, c, f"spec.topologySpreadConstraints[{i}]")
            for i, c in enumerate(
                _list(obj, spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints")
            )
        ),
    )


@dataclass(frozen=True, slots=True)
class NodeImage:
    """One entry of ``status.images``: every name the image is known by, and its size."""

    __reduce__ = _by_constructor

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
    raw: Mapping[str, Any] = field(repr=False)

    @cached_property
    def amounts(self) -> dict[str, int]:
        """Allocatable as scheduler integers (cpu millicores, others ``Value()``)."""
        return podresources.to_amounts(self.allocatable)


def parse_node(obj: Mapping[str, Any]) -> Node:
    """Read a v1 Node; raises :class:`ObjectError` naming the field on bad input."""
    meta = _mapping(obj, obj.get("metadata"), "metadata")
    spec = _mapping(obj, obj.get("spec"), "spec")
    status = _mapping(obj, obj.get("status"), "status")
    if not meta.get("name"):
        raise ObjectError(f"{_describe(obj)}: metadata.name: required")
    taints = []
    for i, item in enumerate(_list(obj, spec.get("taints"), "spec.taints")):
        t = _mapping(obj, item, f"spec.taints[{i}]")
        if not t.get("key") or not t.get("effect"):
            raise ObjectError(f"{_describe(obj)}: spec.taints[{i}]: key and effect are required")
        taints.append(Taint(str(t["key"]), str(t.get("value") or ""), str(t["effect"])))
    # The scheduler reads status.allocatable only (NodeInfo.SetNode); capacity is ignored.
    return Node(
        name=str(meta["name"]),
        labels={str(k): str(v) for k, v in _mapping(obj, meta.get("labels"), "labels").items()},
        annotations={
            str(k): str(v)
            for k, v in _mapping(obj, meta.get("annotations"), "metadata.annotations").items()
        },
        unschedulable=bool(spec.get("unschedulable")),
        taints=tuple(taints),
        allocatable=parse_resource_list(obj, status.get("allocatable"), "status.allocatable"),
        images=_parse_images(obj, status.get("images")),
        raw=obj,
    )


def _parse_images(obj: Mapping[str, Any], raw: Any) -> tuple[NodeImage, ...]:
    """``status.images`` (``[]ContainerImage``): names are strings, ``sizeBytes`` an int64 >= 0
    (omitted means 0, as Go's zero value)."""
    images = []
    for i, item in enumerate(_list(obj, raw, "status.images")):
        path = f"status.images[{i}]"
        entry = _mapping(obj, item, path)
        names = _list(obj, entry.get("names"), f"{path}.names")
        for j, name in enumerate(names):
            if not isinstance(name, str):
                raise ObjectError(
                    f"{_describe(obj)}: {path}.names[{j}]: expected a string, got {name!r}"
                )
        size = entry.get("sizeBytes") or 0
        if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= INT64_MAX:
            raise ObjectError(
                f"{_describe(obj)}: {path}.sizeBytes: expected an integer from 0 to "
                f"{INT64_MAX}, got {size!r}"
            )
        images.append(NodeImage(tuple(names), size))
    return tuple(images)
