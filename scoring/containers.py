"""A pod's containers and what the scheduler derives from them (requests, limits, QoS, host
ports), held once for equal specs: the replicas of a workload share one :class:`PodResources`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from scoring import podresources
from scoring.lazy import cached_property
from scoring.object_fields import (
    ObjectError,
    ResourceList,
    as_list,
    describe,
    mapping,
    parse_resource_list,
)


@dataclass(frozen=True, slots=True)
class ContainerPort:
    host_port: int
    protocol: str
    host_ip: str


@dataclass(frozen=True, slots=True)
class Container:
    name: str
    image: str
    requests: ResourceList
    limits: ResourceList
    ports: tuple[ContainerPort, ...]
    restartable: bool  # an init container with restartPolicy: Always (a sidecar)


def parse_container(
    obj: Mapping[str, Any], raw: Any, path: str, *, host_network: bool = False
) -> Container:
    spec = mapping(obj, raw, path)
    resources = mapping(obj, spec.get("resources"), f"{path}.resources")
    requests = parse_resource_list(obj, resources.get("requests"), f"{path}.resources.requests")
    limits = parse_resource_list(obj, resources.get("limits"), f"{path}.resources.limits")
    # API-server defaulting (pkg/apis/core/v1/defaults.go SetDefaults_Container... via
    # defaultRequests): a limit without a request defaults the request to the limit.
    for name, amount in limits.items():
        requests.setdefault(name, amount)
    ports = []
    for j, port in enumerate(as_list(obj, spec.get("ports"), f"{path}.ports")):
        port = mapping(obj, port, f"{path}.ports[{j}]")
        host_port = port.get("hostPort") or 0
        if host_network and not host_port:
            # SetDefaults_PodSpec / defaultHostNetworkPorts (pkg/apis/core/v1/defaults.go):
            # with hostNetwork every container port is also a host port.
            host_port = port.get("containerPort") or 0
        if not isinstance(host_port, int) or not 0 <= host_port <= 65535:
            where = f"{describe(obj)}: {path}.ports[{j}].hostPort"
            raise ObjectError(f"{where}: invalid {host_port!r}")
        if host_port:
            protocol = str(port.get("protocol") or "TCP")
            ports.append(ContainerPort(host_port, protocol, str(port.get("hostIP") or "")))
    image = spec.get("image") or ""
    if not isinstance(image, str):
        raise ObjectError(f"{describe(obj)}: {path}.image: expected a string, got {image!r}")
    return Container(
        name=str(spec.get("name", "")),
        image=image,
        requests=requests,
        limits=limits,
        ports=tuple(ports),
        restartable=spec.get("restartPolicy") == "Always",
    )


@dataclass(eq=False)
class PodResources:
    """What a pod's resource rules read, with the values derived from them. Pods with equal
    specs (a workload's replicas) share one (:func:`pod_resources`)."""

    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...]
    overhead: ResourceList

    @cached_property
    def requests(self) -> dict[str, int]:
        return podresources.to_amounts(podresources.pod_requests(self))

    @cached_property
    def non_zero_requests(self) -> tuple[int, int]:
        return podresources.non_zero_cpu_memory(self)

    @cached_property
    def limits(self) -> dict[str, int]:
        return podresources.to_amounts(podresources.pod_limits(self))

    @cached_property
    def qos_class(self) -> str:
        return podresources.compute_qos(self)

    @cached_property
    def host_ports(self) -> tuple[ContainerPort, ...]:
        sidecars = tuple(c for c in self.init_containers if c.restartable)
        return tuple(p for c in (*sidecars, *self.containers) for p in c.ports)


Amounts = tuple[tuple[str, int], ...]
ContainerKey = tuple[str, str, Amounts, Amounts, tuple[ContainerPort, ...], bool]


def _container_key(c: Container) -> ContainerKey:
    return (
        c.name,
        c.image,
        tuple(c.requests.items()),
        tuple(c.limits.items()),
        c.ports,
        c.restartable,
    )


def _container(key: ContainerKey) -> Container:
    name, image, requests, limits, ports, restartable = key
    return Container(name, image, dict(requests), dict(limits), ports, restartable)


@lru_cache(maxsize=16384)
def _resources_of(
    containers: tuple[ContainerKey, ...],
    init_containers: tuple[ContainerKey, ...],
    overhead: Amounts,
) -> PodResources:
    """The one :class:`PodResources` of equal specs (bounded, so a long-running process does
    not keep every spec it ever saw)."""
    return PodResources(
        tuple(map(_container, containers)), tuple(map(_container, init_containers)), dict(overhead)
    )


def pod_resources(
    containers: tuple[Container, ...],
    init_containers: tuple[Container, ...],
    overhead: ResourceList,
) -> PodResources:
    """The shared :class:`PodResources` equal to these parts."""
    return _resources_of(
        tuple(map(_container_key, containers)),
        tuple(map(_container_key, init_containers)),
        tuple(overhead.items()),
    )
