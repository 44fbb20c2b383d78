"""Pod limits as Koordinator's LimitAware counts them, and per-node totals kept incrementally.

Upstream (koordinator-sh/koordinator@9ddd4fb2): pkg/scheduler/plugins/limitaware/util.go
``getPodResourceLimit`` and cache.go (``Cache.AddPod``/``DeletePod``, fed by the pod informer
and by Reserve/Unreserve).

- A container's limit is, per resource, ``max(limits, requests)`` (``quotav1.Max``).
- A pod's limit is ``max(Σ containers, each init container) + overhead``, summed into a
  ``framework.Resource``: cpu (millicores), memory, ephemeral-storage and scalar resources
  (extended, hugepages, ...); other names are dropped. Restartable (sidecar) init containers
  are treated like ordinary init containers, as Koordinator's code does.
- The "non-zero" variant (used by Score) counts a container whose limit list lacks cpu
  (memory) as 100m (200Mi); an explicit 0 stays 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from scoring.containers import Container
from scoring.objects import Pod
from scoring.plugins.noderesources import is_scalar_resource
from scoring.podresources import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, to_amounts
from scoring.snapshot import BoolArray, IntArray, Snapshot, add_columns

BASE_RESOURCES = ("cpu", "memory", "ephemeral-storage")
RAW, NON_ZERO = "raw", "non_zero"


@dataclass(frozen=True)
class PodLimits:
    """A pod's limits: ``raw`` for Filter, ``non_zero`` for Score; ``scalars`` lists the scalar
    resource keys present (a scalar at 0 still makes the pod "request" something)."""

    raw: Mapping[str, int]
    non_zero: Mapping[str, int]
    scalars: frozenset[str]

    @property
    def empty(self) -> bool:
        return not self.scalars and all(self.raw[name] == 0 for name in BASE_RESOURCES)


def container_limit(container: Container) -> dict[str, int]:
    """``quotav1.Max(limits, requests)`` as scheduler integers."""
    out = to_amounts(container.requests)
    for name, amount in to_amounts(container.limits).items():
        if name not in out or amount > out[name]:
            out[name] = amount
    return out


def _non_zero(limit: Mapping[str, int]) -> tuple[int, int]:
    """``schedutil.GetNonzeroRequests`` on a limit list."""
    return (
        limit.get("cpu", DEFAULT_MILLI_CPU_REQUEST),
        limit.get("memory", DEFAULT_MEMORY_REQUEST),
    )


def _counted(name: str) -> bool:
    return name in BASE_RESOURCES or is_scalar_resource(name)


def pod_limits(pod: Pod) -> PodLimits:
    """``getPodResourceLimit(pod, false)`` and ``(pod, true)`` in one pass."""
    total: dict[str, int] = dict.fromkeys(BASE_RESOURCES, 0)
    cpu0 = memory0 = 0
    for container in pod.containers:
        limit = container_limit(container)
        for name, amount in limit.items():
            if _counted(name):
                total[name] = total.get(name, 0) + amount
        cpu, memory = _non_zero(limit)
        cpu0, memory0 = cpu0 + cpu, memory0 + memory
    for container in pod.init_containers:
        limit = container_limit(container)
        for name, amount in limit.items():
            if _counted(name):
                total[name] = max(total.get(name, 0), amount)
        cpu, memory = _non_zero(limit)
        cpu0, memory0 = max(cpu0, cpu), max(memory0, memory)
    overhead = to_amounts(pod.overhead)
    for name, amount in overhead.items():
        if _counted(name):
            total[name] = total.get(name, 0) + amount
    cpu0 += overhead.get("cpu", 0)
    memory0 += overhead.get("memory", 0)
    scalars = frozenset(name for name in total if name not in BASE_RESOURCES)
    return PodLimits(total, {**total, "cpu": cpu0, "memory": memory0}, scalars)


class LimitTotals:
    """Σ pod limits per node (raw and non-zero), following placements (a snapshot extension).

    Built once from the pods bound in the snapshot, then updated by ``pod_added`` /
    ``pod_removed`` (Reserve/Unreserve), never recomputed per evaluation.
    """

    # Reads pod limits, not node labels or taints: Snapshot.variant shares it.
    reads_node_labels: ClassVar[bool] = False

    def __init__(self, snapshot: Snapshot) -> None:
        self.columns: dict[str, int] = {name: i for i, name in enumerate(BASE_RESOURCES)}
        sums: dict[str, list[dict[str, int]]] = {RAW: [], NON_ZERO: []}
        for pods in snapshot.pods_on_node:
            raw: dict[str, int] = {}
            non_zero: dict[str, int] = {}
            for pod in pods:
                limits = pod_limits(pod)
                _accumulate(raw, limits.raw)
                _accumulate(non_zero, limits.non_zero)
            sums[RAW].append(raw)
            sums[NON_ZERO].append(non_zero)
        for per_node in sums.values():
            for amounts in per_node:
                for name in amounts:
                    self.columns.setdefault(name, len(self.columns))
        self.totals = {kind: self._matrix(per_node) for kind, per_node in sums.items()}

    def _matrix(self, per_node: list[dict[str, int]]) -> IntArray:
        matrix = np.zeros((len(per_node), len(self.columns)), dtype=np.int64)
        for node, amounts in enumerate(per_node):
            for name, amount in amounts.items():
                matrix[node, self.columns[name]] = amount
        return matrix

    def column(self, kind: str, name: str) -> IntArray:
        """The ``kind`` (RAW / NON_ZERO) total of ``name`` on every node."""
        index = self.columns.get(name)
        matrix = self.totals[kind]
        if index is None:
            return np.zeros(matrix.shape[0], dtype=np.int64)
        result: IntArray = matrix[:, index]
        return result

    def pod_added(self, pod: Pod, node: int) -> None:
        self._apply(pod_limits(pod), node, +1)

    def pod_removed(self, pod: Pod, node: int) -> None:
        self._apply(pod_limits(pod), node, -1)

    def node_event(self, kind: str, node: int) -> None:
        """Limits belong to pods: Node, NodeMetric and NRT changes leave the totals valid."""

    def nodes_deleted(self, keep: BoolArray) -> None:
        self.totals = {kind: matrix[keep] for kind, matrix in self.totals.items()}

    def nodes_added(self, count: int) -> None:
        self.totals = {kind: add_columns(m.T, count).T for kind, m in self.totals.items()}

    def _apply(self, limits: PodLimits, node: int, sign: int) -> None:
        for kind, amounts in ((RAW, limits.raw), (NON_ZERO, limits.non_zero)):
            for name, amount in amounts.items():
                column = self._ensure(name)  # may grow (replace) the matrices
                self.totals[kind][node, column] += sign * amount

    def _ensure(self, name: str) -> int:
        index = self.columns.get(name)
        if index is None:
            index = self.columns[name] = len(self.columns)
            for kind, matrix in self.totals.items():
                self.totals[kind] = np.hstack([matrix, np.zeros((matrix.shape[0], 1), np.int64)])
        return index


def _accumulate(into: dict[str, int], amounts: Mapping[str, int]) -> None:
    for name, amount in amounts.items():
        into[name] = into.get(name, 0) + amount
