"""Per-snapshot and per-cycle state of LoadAwareScheduling.

The snapshot state (NodeMetric columns, allocatable for load checks, threshold profiles, the assign
cache) is built once per snapshot and args through ``Snapshot.extension`` and follows Reserve /
Unreserve as a pod listener. The cycle state is the incoming pod's estimate and class, computed once
per cycle (upstream's PreFilter writes the estimate to CycleState).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar

import numpy as np

from scoring.objects import Pod
from scoring.plugins.loadaware.args import LoadAwareArgs
from scoring.plugins.loadaware.assign_cache import AssignCache
from scoring.plugins.loadaware.estimator import Estimator, node_allocatable
from scoring.plugins.loadaware.nodemetric import NodeMetrics, parse_node_metric, time_ns
from scoring.plugins.loadaware.priority import PROD, priority_class
from scoring.plugins.loadaware.thresholds import NodeThresholds
from scoring.snapshot import (
    NODE_EVENT,
    NODE_METRIC_EVENT,
    BoolArray,
    IntArray,
    Snapshot,
    add_columns,
    gc_paused,
    keep_columns,
)


def load_allocatable(snapshot: Snapshot, resources: tuple[str, ...]) -> tuple[IntArray, BoolArray]:
    """``EstimateNode`` for every node (resources × nodes), and which nodes use raw-allocatable."""
    matrix = np.zeros((len(resources), len(snapshot)), dtype=np.int64)
    raw = np.zeros(len(snapshot), dtype=bool)
    for k, name in enumerate(resources):
        column = snapshot.resource_index.get(name)
        if column is not None:
            matrix[k] = snapshot.allocatable[:, column]
    for i in range(len(snapshot)):
        _overlay_raw_allocatable(snapshot, resources, matrix, raw, i)
    return matrix, raw


def _overlay_raw_allocatable(
    snapshot: Snapshot, resources: tuple[str, ...], matrix: IntArray, raw: BoolArray, node: int
) -> None:
    overlay = node_allocatable(snapshot.nodes[node])
    raw[node] = overlay is not None
    if overlay is not None:
        matrix[:, node] = [overlay.get(name, 0) for name in resources]


class LoadAwareState:
    """Everything LoadAwareScheduling derives from one snapshot under one set of args."""

    # Reads NodeMetrics, allocatable and annotations, not node labels or taints:
    # Snapshot.variant shares it.
    reads_node_labels: ClassVar[bool] = False

    def __init__(self, snapshot: Snapshot, args: LoadAwareArgs, now: datetime) -> None:
        self._snapshot = snapshot
        with gc_paused():
            self._build(snapshot, args, now)

    def _build(self, snapshot: Snapshot, args: LoadAwareArgs, now: datetime) -> None:
        self.resources = args.resource_names
        self.metrics = NodeMetrics.build(snapshot, self.resources)
        self.allocatable, self.raw_allocatable = load_allocatable(snapshot, self.resources)
        self._reset_derived()
        self.thresholds = NodeThresholds(snapshot, args, self.resources)
        self.estimator = Estimator(
            args.estimated_scaling_factors or {}, args.allow_customize_estimation
        )
        self.cache = AssignCache(snapshot, self.metrics, self.estimator, args, time_ns(now))

    def _reset_derived(self) -> None:
        """float64(allocatable) for the usage percentage (0 becomes 1: those pairs are skipped),
        and a fresh memo of arrays derived from the snapshot (filter plans, expiry by "now")."""
        self.allocatable_float = np.where(self.allocatable == 0, 1, self.allocatable).astype(
            np.float64
        )
        self.memo: dict[tuple[object, ...], Any] = {}

    def node_event(self, kind: str, node: int) -> None:
        """Follow a Node or NodeMetric change in place (``Snapshot`` NodeEventListener)."""
        snapshot = self._snapshot
        if kind == NODE_METRIC_EVENT:
            raw = snapshot.node_metrics.get(snapshot.node_names[node])
            parsed = None if raw is None else parse_node_metric(raw, self.resources)
            self.metrics.replace(node, parsed)
            self.cache.metric_replaced(node)
        elif kind == NODE_EVENT:
            for k, name in enumerate(self.resources):
                column = snapshot.resource_index.get(name)
                self.allocatable[k, node] = (
                    0 if column is None else snapshot.allocatable[node, column]
                )
            _overlay_raw_allocatable(
                snapshot, self.resources, self.allocatable, self.raw_allocatable, node
            )
            self.thresholds.update(node, snapshot)
            amounts = self.allocatable[:, node]
            self.allocatable_float[:, node] = np.where(amounts == 0, 1, amounts)
        else:
            return
        self.memo = {}

    def for_variant(self, variant: Snapshot, nodes: Sequence[int]) -> LoadAwareState:
        """This state on ``variant``, whose Node objects at ``nodes`` were replaced: their
        annotations may name other thresholds (``Snapshot.variant``). NodeMetrics, estimates
        and the assign cache are shared; this state is untouched."""
        if not nodes:
            return self
        other = copy.copy(self)
        other._snapshot = variant
        other.thresholds = self.thresholds.with_nodes(variant, nodes)
        other.memo = {}
        return other

    def with_thresholds(self, args: LoadAwareArgs) -> LoadAwareState:
        """This state under ``args`` that differ from its own in usage thresholds only (a
        what-if of a threshold): NodeMetrics, estimates and the assign cache are shared as
        they are; the thresholds and the plans derived from them are new."""
        other = copy.copy(self)
        other.thresholds = NodeThresholds(self._snapshot, args, self.resources)
        other.memo = {}
        return other

    def nodes_deleted(self, keep: BoolArray) -> None:
        """Deleted nodes' columns go (their pods were removed first)."""
        self.allocatable = keep_columns(self.allocatable, keep)
        self.raw_allocatable = keep_columns(self.raw_allocatable, keep)
        self.allocatable_float = keep_columns(self.allocatable_float, keep)
        self.thresholds.group_ids = keep_columns(self.thresholds.group_ids, keep)
        self.metrics.nodes_deleted(keep)
        self.cache.nodes_deleted(keep)
        self.memo = {}

    def nodes_added(self, count: int) -> None:
        """Added nodes get empty columns, then their Node and NodeMetric as if they changed."""
        self.allocatable = add_columns(self.allocatable, count)
        self.raw_allocatable = add_columns(self.raw_allocatable, count)
        self.allocatable_float = add_columns(self.allocatable_float, count)
        self.thresholds.group_ids = add_columns(self.thresholds.group_ids, count)
        self.metrics.nodes_added(count)
        self.cache.nodes_added(count)
        for node in range(len(self._snapshot) - count, len(self._snapshot)):
            self.node_event(NODE_EVENT, node)
            self.node_event(NODE_METRIC_EVENT, node)

    def tick(self, now: datetime) -> None:
        """The cache's clock: pods it sees from now on without PodScheduled are stamped ``now``."""
        self.cache.clock_ns = time_ns(now)

    def pod_added(self, pod: Pod, node: int) -> None:
        self.cache.pod_added(pod, node)

    def pod_removed(self, pod: Pod, node: int) -> None:
        self.cache.pod_removed(pod, node)


@dataclass(frozen=True)
class IncomingPod:
    """The pod being scheduled: its estimate (``ToFactorVec(EstimatePod)``) and class."""

    estimate: IntArray  # one value per resource
    priority: str
    daemonset: bool

    @property
    def column(self) -> IntArray:
        """The estimate as a (resources × 1) column, to add to resources × nodes arrays."""
        result: IntArray = self.estimate[:, None]
        return result

    @property
    def prod(self) -> bool:
        return self.priority == PROD

    @classmethod
    def of(cls, pod: Pod, state: LoadAwareState) -> IncomingPod:
        estimates = state.estimator.estimate_pod(pod)
        vector = np.array([estimates.get(name, 0) for name in state.resources], dtype=np.int64)
        daemonset = any(o.get("kind") == "DaemonSet" for o in pod.owner_references)
        return cls(vector, priority_class(pod), daemonset)
