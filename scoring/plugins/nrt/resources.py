"""What the NUMA plugin reads from a pod, and how it classifies resource names.

Requests are scheduler integers (cpu in millicores, everything else ``Value()``), which keeps
every comparison upstream makes with ``Quantity.Cmp`` exact at millicore precision. A key
present with value 0 is kept: upstream iterates request *keys* in several places.

Upstream: pkg/noderesourcetopology/numaresources.go (``isHostLevelResource``,
``isNUMAAffineResource``), resourcerequests/exclusive.go (``IncludeNonNative``),
pkg/util/resource.go (``GetPodEffectiveRequest``), logging/logging.go (container kinds).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scoring.containers import Container
from scoring.objects import Pod
from scoring.podresources import to_amounts

Amounts = Mapping[str, int]

# Resources util.ResourceList(nodeInfo.Allocatable) always lists, even at 0.
ALWAYS_AT_NODE_LEVEL = frozenset({"cpu", "memory", "pods", "ephemeral-storage"})

INIT, SIDECAR, APP = "init", "sidecar", "app"


def is_native(name: str) -> bool:
    """``v1helper.IsNativeResource``: no domain, or a ``kubernetes.io/`` domain."""
    return "/" not in name or "kubernetes.io/" in name


def is_host_level(name: str) -> bool:
    """Resources that may legitimately carry no NUMA affinity (checked at node level only)."""
    return name in ("ephemeral-storage", "storage") or not is_native(name)


def is_numa_affine(name: str) -> bool:
    """cpu, memory and hugepages must be NUMA-bound; devices only may be."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def cores(amount: int, name: str) -> int:
    """``Quantity.Value()`` as the scoring strategies use it: cpu in whole cores, rounded up."""
    return -(-amount // 1000) if name == "cpu" else amount


@dataclass(frozen=True)
class ContainerRequest:
    """One container's requests as the topology manager sees them."""

    name: str
    kind: str  # INIT, SIDECAR or APP
    requests: Amounts


@dataclass(frozen=True)
class PodNumaView:
    """The pod facts every NUMA decision needs, computed once per scheduling cycle."""

    qos: str
    init_containers: tuple[ContainerRequest, ...]
    containers: tuple[ContainerRequest, ...]
    effective: Amounts  # GetPodEffectiveRequest
    non_native: bool  # some (init) container requests a non-native resource

    @property
    def guaranteed(self) -> bool:
        return self.qos == "Guaranteed"

    @property
    def all_containers(self) -> tuple[ContainerRequest, ...]:
        """``append(InitContainers, Containers...)``: the order Score walks them."""
        return (*self.init_containers, *self.containers)

    @classmethod
    def of(cls, pod: Pod) -> PodNumaView:
        init = tuple(_request(c, SIDECAR if c.restartable else INIT) for c in pod.init_containers)
        app = tuple(_request(c, APP) for c in pod.containers)
        names = {name for c in (*pod.init_containers, *pod.containers) for name in c.requests}
        return cls(
            qos=pod.qos_class,
            init_containers=init,
            containers=app,
            effective=effective_request(pod),
            non_native=any(not is_native(name) for name in names),
        )


def _request(container: Container, kind: str) -> ContainerRequest:
    return ContainerRequest(container.name, kind, to_amounts(container.requests))


def effective_request(pod: Pod) -> dict[str, int]:
    """``util.GetPodEffectiveRequest``: max(Σ app containers, each init container) + overhead.

    Unlike kube-scheduler's ``PodRequests``, restartable (sidecar) init containers get no special
    treatment and pod-level ``spec.resources`` is ignored, as in the plugin.
    """
    init_peak: dict[str, int] = {}
    for container in pod.init_containers:
        for name, amount in container.requests.items():
            if name not in init_peak or amount > init_peak[name]:
                init_peak[name] = amount
    total: dict[str, int] = {}
    for container in pod.containers:
        for name, amount in container.requests.items():
            total[name] = total.get(name, 0) + amount
    for name, amount in init_peak.items():
        if name not in total or amount > total[name]:
            total[name] = amount
    for name, amount in pod.overhead.items():
        total[name] = total.get(name, 0) + amount
    return to_amounts(total)
