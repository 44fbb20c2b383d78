"""The default estimator: a pod's expected usage, and a node's allocatable for load checks.

Upstream: pkg/scheduler/plugins/loadaware/estimator/default_estimator.go.

Pod: for each scaling factor ``f`` (args, or the pod annotation when ``allowCustomizeEstimation``),
``q = max(limit, request)`` of the resource the pod's priority class actually requests (batch
pods request ``kubernetes.io/batch-cpu``, mid pods ``kubernetes.io/mid-cpu``, free pods nothing),
then ``round(q * f / 100)`` with Go's ``math.Round`` in float64, capped at the limit. A zero
``q`` estimates 250m cpu / 200Mi memory (also for batch-cpu/batch-memory, not for mid), 0 else.
The result is booked under the factor's own name (``cpu``, ``memory``).

Node: ``status.allocatable`` overlaid with the ``node.koordinator.sh/raw-allocatable``
annotation when it parses and is non-empty (the allocatable before resource amplification).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from scoring.objects import Node, Pod
from scoring.plugins.loadaware import gojson
from scoring.plugins.loadaware.priority import BATCH, MID, NONE, PROD, priority_class

ANNOTATION_SCALING_FACTORS = "scheduling.koordinator.sh/load-estimated-scaling-factors"
ANNOTATION_RAW_ALLOCATABLE = "node.koordinator.sh/raw-allocatable"

DEFAULT_MILLI_CPU_REQUEST = 250
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

BATCH_CPU = "kubernetes.io/batch-cpu"
BATCH_MEMORY = "kubernetes.io/batch-memory"
MID_CPU = "kubernetes.io/mid-cpu"
MID_MEMORY = "kubernetes.io/mid-memory"

# apis/extension/resource.go ResourceNameMap.
_TRANSLATED = {
    BATCH: {"cpu": BATCH_CPU, "memory": BATCH_MEMORY},
    MID: {"cpu": MID_CPU, "memory": MID_MEMORY},
}
_DEFAULT_WHEN_ZERO = {
    "cpu": DEFAULT_MILLI_CPU_REQUEST,
    BATCH_CPU: DEFAULT_MILLI_CPU_REQUEST,
    "memory": DEFAULT_MEMORY_REQUEST,
    BATCH_MEMORY: DEFAULT_MEMORY_REQUEST,
}


def go_round(x: float) -> float:
    """Go's ``math.Round``: half away from zero, exact (``x - trunc(x)`` is exact in float64)."""
    whole = float(math.trunc(x))
    if abs(x - whole) >= 0.5:
        whole += math.copysign(1.0, x)
    return whole


def requested_resource(priority: str, name: str) -> str:
    """``TranslateResourceNameByPriorityClass``: "" (nothing) for free and unknown names."""
    if priority in (PROD, NONE):
        return name
    return _TRANSLATED.get(priority, {}).get(name, "")


def estimate_resource(
    requests: Mapping[str, int], limits: Mapping[str, int], name: str, factor: int
) -> int:
    """``estimatedUsedByResource`` on scheduler integers (cpu in millicores)."""
    limit = limits.get(name, 0)
    quantity = max(limit, requests.get(name, 0))
    if quantity == 0:
        return _DEFAULT_WHEN_ZERO.get(name, 0)
    estimate = int(go_round(float(quantity) * float(factor) / 100))
    if limit > 0 and estimate > limit:
        return limit
    return estimate


def custom_scaling_factors(pod: Pod) -> dict[str, int] | None:
    """``GetCustomEstimatedScalingFactors``: None when absent or unparseable."""
    text = pod.annotations.get(ANNOTATION_SCALING_FACTORS, "")
    if not text:
        return None
    try:
        return gojson.int_map(gojson.loads(text), None) or {}
    except gojson.GoJSONError:
        return None


class Estimator:
    """``DefaultEstimator`` with the args' scaling factors; estimates are memoized by pod shape."""

    def __init__(self, factors: Mapping[str, int], allow_customize: bool) -> None:
        self.factors = dict(factors)
        self.allow_customize = allow_customize
        self._memo: dict[tuple[object, ...], dict[str, int]] = {}

    def factors_for(self, pod: Pod) -> dict[str, int]:
        """The annotation's factors win; keys it lacks come from the args."""
        custom = custom_scaling_factors(pod) if self.allow_customize else None
        if not custom:
            return self.factors
        return {**self.factors, **custom}

    def estimate_pod(self, pod: Pod) -> dict[str, int]:
        """``EstimatePod``: one estimate per scaling-factor key."""
        priority = priority_class(pod)
        custom = pod.annotations.get(ANNOTATION_SCALING_FACTORS) if self.allow_customize else None
        key = (priority, pod.resources, custom)  # replicas share their PodResources
        cached = self._memo.get(key)
        if cached is None:
            requests, limits = pod.requests, pod.limits
            cached = {
                name: estimate_resource(requests, limits, requested_resource(priority, name), f)
                for name, f in self.factors_for(pod).items()
            }
            self._memo[key] = cached
        return cached


def node_allocatable(node: Node) -> dict[str, int] | None:
    """The raw-allocatable overlay of ``EstimateNode``, or None when it does not apply."""
    text = node.annotations.get(ANNOTATION_RAW_ALLOCATABLE)
    if text is None:
        return None
    try:
        raw = gojson.resource_list(gojson.loads(text))
    except gojson.GoJSONError:
        return None
    if not raw:
        return None
    return {**node.amounts, **raw}
