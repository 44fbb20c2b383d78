"""Pod-level requests, limits and QoS exactly as Kubernetes computes them.

``pod_requests`` / ``pod_limits`` follow k8s.io/component-helpers/resource/helpers.go
(``PodRequests``, ``PodLimits``): the sum of app containers, then the max with each init container,
where restartable (sidecar) init containers keep running and so add to everything after them; then
the pod overhead. ``compute_qos`` follows pkg/apis/core/v1/helper/qos (``ComputePodQOS``).
Sums are taken on exact quantities (integer nano-units) and converted to scheduler integers only
at the end, as the Go code converts the summed ``ResourceList``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from scoring.quantity import NANO, nanos_milli_value, nanos_value

ResourceList = dict[str, int]  # nano-units


class Container(Protocol):
    """What these rules read of a container (``scoring.objects.Container``)."""

    @property
    def requests(self) -> ResourceList: ...
    @property
    def limits(self) -> ResourceList: ...
    @property
    def restartable(self) -> bool: ...


class Pod(Protocol):
    """What these rules read of a pod (``scoring.objects.Pod``, which calls them)."""

    @property
    def containers(self) -> tuple[Container, ...]: ...
    @property
    def init_containers(self) -> tuple[Container, ...]: ...
    @property
    def overhead(self) -> ResourceList: ...


# pkg/scheduler/util/pod_resources.go: DefaultMilliCPURequest, DefaultMemoryRequest.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
_NON_MISSING: Mapping[str, int] = {
    "cpu": DEFAULT_MILLI_CPU_REQUEST * NANO // 1000,
    "memory": DEFAULT_MEMORY_REQUEST * NANO,
}


def _add(into: ResourceList, other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        into[name] = into.get(name, 0) + amount


def _max(into: ResourceList, other: Mapping[str, int]) -> None:
    for name, amount in other.items():
        if name not in into or amount > into[name]:
            into[name] = amount


def _aggregate(
    containers: Iterable[Container],
    init_containers: Iterable[Container],
    pick: str,
    defaults: Mapping[str, int] | None,
) -> ResourceList:
    def resources(c: Container) -> Mapping[str, int]:
        own: Mapping[str, int] = c.requests if pick == "requests" else c.limits
        if defaults:
            return {**defaults, **own}
        return own

    total: ResourceList = {}
    for c in containers:
        _add(total, resources(c))
    sidecars: ResourceList = {}
    init_peak: ResourceList = {}
    for c in init_containers:
        if c.restartable:
            _add(total, resources(c))
            _add(sidecars, resources(c))
            current: Mapping[str, int] = sidecars
        else:
            tmp: ResourceList = {}
            _add(tmp, resources(c))
            _add(tmp, sidecars)
            current = tmp
        _max(init_peak, current)
    _max(total, init_peak)
    return total


def pod_requests(pod: Pod, *, non_missing: Mapping[str, int] | None = None) -> ResourceList:
    """``PodRequests``: containers, init-container peak, overhead (exact quantities)."""
    total = _aggregate(pod.containers, pod.init_containers, "requests", non_missing)
    _add(total, pod.overhead)
    return total


def pod_limits(pod: Pod) -> ResourceList:
    """``PodLimits``: like requests, but overhead is added only to limits that are set."""
    total = _aggregate(pod.containers, pod.init_containers, "limits", None)
    for name, amount in pod.overhead.items():
        if name in total:
            total[name] += amount
    return total


def to_amounts(resources: Mapping[str, int]) -> dict[str, int]:
    """Scheduler integers: cpu as ``MilliValue()``, everything else as ``Value()``."""
    return {
        name: nanos_milli_value(amount) if name == "cpu" else nanos_value(amount)
        for name, amount in resources.items()
    }


def non_zero_cpu_memory(pod: Pod) -> tuple[int, int]:
    """Requests with 100m cpu / 200Mi memory for containers that omit the key.

    pkg/scheduler/framework/types.go ``calculateResource`` (``NonMissingContainerRequests``): an
    explicit zero stays zero; only a missing key is defaulted. Used by NodeResourcesFit scoring.
    """
    requests = pod_requests(pod, non_missing=_NON_MISSING)
    return nanos_milli_value(requests.get("cpu", 0)), nanos_value(requests.get("memory", 0))


def compute_qos(pod: Pod) -> str:
    """``ComputePodQOS``: only cpu and memory count; init containers are included."""
    requests: ResourceList = {}
    limits: ResourceList = {}
    guaranteed = True
    for c in (*pod.containers, *pod.init_containers):
        for name, amount in c.requests.items():
            if name in ("cpu", "memory") and amount > 0:
                requests[name] = requests.get(name, 0) + amount
        found = set()
        for name, amount in c.limits.items():
            if name in ("cpu", "memory") and amount > 0:
                found.add(name)
                limits[name] = limits.get(name, 0) + amount
        if not {"cpu", "memory"} <= found:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    matching = all(limits.get(n) == amount for n, amount in requests.items())
    if guaranteed and matching and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"
