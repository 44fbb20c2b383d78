"""Pod-level requests, limits and QoS exactly as Kubernetes computes them.

``pod_requests`` / ``pod_limits`` follow k8s.io/component-helpers/resource/helpers.go
(``PodRequests``, ``PodLimits``): the sum of app containers, then the max with each init container,
where restartable (sidecar) init containers keep running and so add to everything after them; then
the pod overhead. ``compute_qos`` follows pkg/apis/core/v1/helper/qos (``ComputePodQOS``).
Sums are taken on exact quantities and converted to scheduler integers only at the end, as the
Go code converts the summed ``ResourceList``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING

from scoring.quantity import milli_value, value

if TYPE_CHECKING:
    from scoring.objects import Container, Pod

ResourceList = dict[str, Fraction]

# pkg/scheduler/util/pod_resources.go: DefaultMilliCPURequest, DefaultMemoryRequest.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
_NON_MISSING: Mapping[str, Fraction] = {
    "cpu": Fraction(DEFAULT_MILLI_CPU_REQUEST, 1000),
    "memory": Fraction(DEFAULT_MEMORY_REQUEST),
}


def _add(into: ResourceList, other: Mapping[str, Fraction]) -> None:
    for name, amount in other.items():
        into[name] = into.get(name, Fraction(0)) + amount


def _max(into: ResourceList, other: Mapping[str, Fraction]) -> None:
    for name, amount in other.items():
        if name not in into or amount > into[name]:
            into[name] = amount


def _aggregate(
    containers: Iterable[Container],
    init_containers: Iterable[Container],
    pick: str,
    defaults: Mapping[str, Fraction] | None,
) -> ResourceList:
    def resources(c: Container) -> Mapping[str, Fraction]:
        own: Mapping[str, Fraction] = c.requests if pick == "requests" else c.limits
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
            current: Mapping[str, Fraction] = sidecars
        else:
            tmp: ResourceList = {}
            _add(tmp, resources(c))
            _add(tmp, sidecars)
            current = tmp
        _max(init_peak, current)
    _max(total, init_peak)
    return total


def pod_requests(pod: Pod, *, non_missing: Mapping[str, Fraction] | None = None) -> ResourceList:
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


def to_amounts(resources: Mapping[str, Fraction]) -> dict[str, int]:
    """Scheduler integers: cpu as ``MilliValue()``, everything else as ``Value()``."""
    return {
        name: milli_value(amount) if name == "cpu" else value(amount)
        for name, amount in resources.items()
    }


def non_zero_cpu_memory(pod: Pod) -> tuple[int, int]:
    """Requests with 100m cpu / 200Mi memory for containers that omit the key.

    pkg/scheduler/framework/types.go ``calculateResource`` (``NonMissingContainerRequests``): an
    explicit zero stays zero; only a missing key is defaulted. Used by NodeResourcesFit scoring.
    """
    requests = pod_requests(pod, non_missing=_NON_MISSING)
    return milli_value(requests.get("cpu", Fraction(0))), value(requests.get("memory", Fraction(0)))


def compute_qos(pod: Pod) -> str:
    """``ComputePodQOS``: only cpu and memory count; init containers are included."""
    requests: ResourceList = {}
    limits: ResourceList = {}
    guaranteed = True
    for c in (*pod.containers, *pod.init_containers):
        for name, amount in c.requests.items():
            if name in ("cpu", "memory") and amount > 0:
                requests[name] = requests.get(name, Fraction(0)) + amount
        found = set()
        for name, amount in c.limits.items():
            if name in ("cpu", "memory") and amount > 0:
                found.add(name)
                limits[name] = limits.get(name, Fraction(0)) + amount
        if not {"cpu", "memory"} <= found:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    matching = all(limits.get(n) == amount for n, amount in requests.items())
    if guaranteed and matching and len(requests) == len(limits):
        return "Guaranteed"
    return "Burstable"
