"""Which existing pods are estimated, and what they add: Koordinator's ``podAssignCache``.

Upstream: pkg/scheduler/plugins/loadaware/pod_assign_cache.go. Per node, every bound
non-terminated pod (the snapshot's pods, then pods assumed in Reserve) gets:

- ``estimate``: the estimator's vector, None when empty or all zero (e.g. koord-free pods);
- ``timestamp``: the ``PodScheduled=True`` transition time, else the time the cache saw the pod
  (here: the "now" of the cycle that built the cache or reserved the pod);
- ``deadline`` (forced estimation): ``Initialized`` time + afterInitialized when that knob is > 0
  and the pod is initialized, else timestamp + afterPodScheduled when > 0, else none. Pod
  annotations (when ``allowCustomizeEstimation``) take precedence over the args unless < 0 or
  unparseable.

With the node's NodeMetric (``u`` = the pod's reported usage, ``prod`` = the pod is koord-prod,
``activeProd`` = also reported as koord-prod):

- ``should = u is None or updateTime - reportInterval < timestamp or deadline > updateTime``;
- ``nodeDelta += max(0, e - u)`` if should; ``nodeEstimated += e``; ``prodUsage += u`` if
  activeProd (even without an estimate);
- prod pods not reported as prod count as unreported (``u = None``, should) for ``prodDelta``.

Everything is relative to the metric's updateTime, not the clock: a pod stops being estimated
only when a newer NodeMetric covers it. Reserve/Unreserve follow ``Snapshot.assume_pod`` /
``forget_pod`` (``pod_added`` / ``pod_removed``), so a sequence of placements accumulates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scoring.goint import parse_int64
from scoring.objects import Pod
from scoring.plugins.loadaware.args import LoadAwareArgs
from scoring.plugins.loadaware.estimator import Estimator
from scoring.plugins.loadaware.nodemetric import (
    ZERO_TIME_NS,
    NodeMetrics,
    ParsedMetric,
    Vector,
    seconds_duration,
    time_ns,
)
from scoring.plugins.loadaware.priority import is_prod
from scoring.snapshot import BoolArray, IntArray, Snapshot, add_columns, keep_columns

ANNOTATION_SECONDS_AFTER_POD_SCHEDULED = (
    "scheduling.koordinator.sh/load-estimated-seconds-after-pod-scheduled"
)
ANNOTATION_SECONDS_AFTER_INITIALIZED = (
    "scheduling.koordinator.sh/load-estimated-seconds-after-initialized"
)
ANNOTATION_RESERVE_POD = "scheduling.koordinator.sh/reserve-pod"


@dataclass(frozen=True, slots=True)
class PodRecord:
    """``podAssignInfo``: one cached pod (one per bound pod: slotted)."""

    pod: Pod
    estimate: Vector | None
    timestamp_ns: int
    deadline_ns: int | None
    prod: bool
    scheduled_condition: bool  # the timestamp came from PodScheduled (else: when the cache saw it)

    @property
    def metric_key(self) -> tuple[str, str]:
        """namespace/name, as podsMetric names pods."""
        return (self.pod.namespace, self.pod.name)


@dataclass(frozen=True)
class PodFlags:
    """How one record counts against its node's NodeMetric (``nodeInfo.addPod``)."""

    usage: Vector | None
    should: bool
    active_prod: bool
    reason: str  # why it is estimated (for explanations), "" when it is not


def cache_key(pod: Pod) -> str:
    """Pods are cached by UID; objects without one fall back to namespace/name."""
    return pod.uid or pod.key


def _annotation_seconds(pod: Pod, key: str) -> int:
    """``GetCustomEstimatedSeconds*``: ``strconv.ParseInt(s, 10, 64)``, -1 when absent/invalid."""
    text = pod.annotations.get(key, "")
    value = parse_int64(text)
    return -1 if value is None else value


def _condition_ns(pod: Pod, kind: str) -> int | None:
    """The transition time of a ``True`` condition, None when absent, not True or zero."""
    condition = pod.condition(kind)
    if condition is None or condition.status != "True" or condition.last_transition is None:
        return None
    stamp = time_ns(condition.last_transition)
    return None if stamp == ZERO_TIME_NS else stamp


class AssignCache:
    """Per-node sums over cached pods, as numpy rows aligned with the snapshot's nodes."""

    def __init__(
        self,
        snapshot: Snapshot,
        metrics: NodeMetrics,
        estimator: Estimator,
        args: LoadAwareArgs,
        clock_ns: int,
    ) -> None:
        self.metrics = metrics
        self.estimator = estimator
        self.args = args
        self.resources = metrics.resources
        self.clock_ns = clock_ns
        shape = (len(self.resources), len(snapshot))  # resource-major, like NodeMetrics
        self.node_delta = np.zeros(shape, dtype=np.int64)
        self.prod_delta = np.zeros(shape, dtype=np.int64)
        self.node_estimated = np.zeros(shape, dtype=np.int64)
        self.prod_usage = np.zeros(shape, dtype=np.int64)
        if args.prod_usage_include_sys:
            self.prod_usage += np.where(metrics.has_info, metrics.system_usage, 0)
        self.records: list[dict[str, PodRecord]] = [{} for _ in range(len(snapshot))]
        self._bulk_add(snapshot)

    def metric_replaced(self, node: int) -> None:
        """The node's NodeMetric changed: recount its pods against it, keeping their timestamps
        (``AddOrUpdateNodeMetric`` resets the sums and re-adds every cached pod)."""
        for total in self._totals():
            total[:, node] = 0
        metric = self.metrics.parsed[node]
        if self.args.prod_usage_include_sys and metric is not None and metric.has_info:
            self.prod_usage[:, node] = metric.system_usage
        self._apply(node, list(self.records[node].values()), +1)

    def nodes_deleted(self, keep: BoolArray) -> None:
        self.node_delta, self.prod_delta, self.node_estimated, self.prod_usage = (
            keep_columns(total, keep) for total in self._totals()
        )
        self.records = [records for records, kept in zip(self.records, keep, strict=True) if kept]

    def nodes_added(self, count: int) -> None:
        """Empty columns (the node's NodeMetric is accounted by :meth:`metric_replaced`)."""
        self.node_delta, self.prod_delta, self.node_estimated, self.prod_usage = (
            add_columns(total, count) for total in self._totals()
        )
        self.records.extend({} for _ in range(count))

    # -- records ------------------------------------------------------------------------------

    def record(self, pod: Pod) -> PodRecord:
        """``assign``'s podAssignInfo for ``pod`` (estimate, timestamp, deadline)."""
        estimates = self.estimator.estimate_pod(pod)
        vector = tuple(estimates.get(name, 0) for name in self.resources)
        estimate = vector if any(vector) else None
        scheduled = _condition_ns(pod, "PodScheduled")
        timestamp = scheduled if scheduled is not None else self.clock_ns
        return PodRecord(
            pod=pod,
            estimate=estimate,
            timestamp_ns=timestamp,
            deadline_ns=self._deadline(pod, timestamp),
            prod=is_prod(pod),
            scheduled_condition=scheduled is not None,
        )

    def _deadline(self, pod: Pod, timestamp: int) -> int | None:
        """``shouldEstimatePodDeadline``."""
        after_scheduled = after_initialized = -1
        if self.args.allow_customize_estimation:
            after_scheduled = _annotation_seconds(pod, ANNOTATION_SECONDS_AFTER_POD_SCHEDULED)
            after_initialized = _annotation_seconds(pod, ANNOTATION_SECONDS_AFTER_INITIALIZED)
        if self.args.estimated_seconds_after_pod_scheduled is not None and after_scheduled < 0:
            after_scheduled = self.args.estimated_seconds_after_pod_scheduled
        if self.args.estimated_seconds_after_initialized is not None and after_initialized < 0:
            after_initialized = self.args.estimated_seconds_after_initialized
        if after_initialized > 0:
            initialized = _condition_ns(pod, "Initialized")
            if initialized is not None:
                return initialized + seconds_duration(after_initialized)
        if after_scheduled > 0 and timestamp != ZERO_TIME_NS:
            return timestamp + seconds_duration(after_scheduled)
        return None

    def flags(self, record: PodRecord, metric: ParsedMetric) -> PodFlags:
        """``addPod``'s conditions for one pod against the node's metric."""
        usage = metric.pod_usages.get(record.metric_key)
        update = metric.estimation_update_ns
        reason = ""
        if usage is None:
            reason = "no usage reported"
        elif update - metric.report_interval_ns < record.timestamp_ns:
            reason = "scheduled within the report interval"
        elif record.deadline_ns is not None and record.deadline_ns > update:
            reason = "forced estimation window"
        active_prod = record.prod and record.metric_key in metric.prod_pods
        return PodFlags(usage, reason != "", active_prod, reason)

    # -- accounting ---------------------------------------------------------------------------

    def contributions(
        self, records: Sequence[PodRecord], metrics: Sequence[ParsedMetric]
    ) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        """Each record's (nodeDelta, prodDelta, nodeEstimated, prodUsage) terms, one row each,
        against its node's metric."""
        width = len(self.resources)
        zeros = (0,) * width
        flags = [self.flags(r, m) for r, m in zip(records, metrics, strict=True)]
        e = np.array([r.estimate or zeros for r in records], np.int64).reshape(-1, width)
        u = np.array([f.usage or zeros for f in flags], np.int64).reshape(-1, width)
        has_e = _column([r.estimate is not None for r in records])
        has_u = _column([f.usage is not None for f in flags])
        should = _column([f.should for f in flags])
        prod = _column([r.prod for r in records])
        active = _column([f.active_prod for f in flags])
        node_delta = np.where(has_e & should, np.maximum(e - u, 0), 0)
        # Prod pods koordlet does not report as prod count as unreported for prodDelta.
        demoted = ~active & has_u
        prod_u = np.where(demoted, 0, u)
        prod_should = should | demoted
        prod_delta = np.where(has_e & prod & prod_should, np.maximum(e - prod_u, 0), 0)
        estimated = np.where(has_e, e, 0)
        prod_usage = np.where(active, u, 0)
        return node_delta, prod_delta, estimated, prod_usage

    def _apply(self, node: int, records: Sequence[PodRecord], sign: int) -> None:
        metric = self.metrics.parsed[node]
        if metric is None or not records:
            return  # upstream accounts pods only while the node has a NodeMetric
        terms = [self.contribution(record, metric) for record in records]
        for t, total in enumerate(self._totals()):
            delta = [sum(column) for column in zip(*(term[t] for term in terms), strict=True)]
            if any(delta):
                total[:, node] += np.array(delta, dtype=np.int64) * sign

    def contribution(
        self, record: PodRecord, metric: ParsedMetric
    ) -> tuple[Vector, Vector, Vector, Vector]:
        """One record's (nodeDelta, prodDelta, nodeEstimated, prodUsage) terms, as
        :meth:`contributions` computes them for many (Python ints: a node has a few pods)."""
        flags = self.flags(record, metric)
        zeros = (0,) * len(self.resources)
        u = flags.usage or zeros
        e = record.estimate
        active = flags.active_prod
        prod_usage = u if active else zeros
        if e is None:
            return zeros, zeros, zeros, prod_usage
        node_delta = (
            tuple(max(a - b, 0) for a, b in zip(e, u, strict=True)) if flags.should else zeros
        )
        # Prod pods koordlet does not report as prod count as unreported for prodDelta.
        demoted = not active and flags.usage is not None
        prod_u = zeros if demoted else u
        if record.prod and (flags.should or demoted):
            prod_delta = tuple(max(a - b, 0) for a, b in zip(e, prod_u, strict=True))
        else:
            prod_delta = zeros
        return node_delta, prod_delta, e, prod_usage

    def _totals(self) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        return self.node_delta, self.prod_delta, self.node_estimated, self.prod_usage

    def _bulk_add(self, snapshot: Snapshot) -> None:
        """The snapshot's bound pods, accounted in one vectorized pass."""
        nodes: list[int] = []
        added: list[PodRecord] = []
        metrics: list[ParsedMetric] = []
        for node, pods in enumerate(snapshot.pods_on_node):
            records = self.records[node]
            for pod in pods:
                if pod.annotations.get(ANNOTATION_RESERVE_POD) != "true":
                    records[cache_key(pod)] = self.record(pod)
            metric = self.metrics.parsed[node]
            if metric is not None and records:
                nodes.extend([node] * len(records))
                added.extend(records.values())
                metrics.extend([metric] * len(records))
        if not added:
            return
        terms = self.contributions(added, metrics)
        for total, term in zip(self._totals(), terms, strict=True):
            np.add.at(total.T, np.array(nodes), term)

    def pod_added(self, pod: Pod, node: int) -> None:
        """``assign`` (Reserve): add the pod, replacing an earlier record of the same pod."""
        if pod.is_terminal or pod.annotations.get(ANNOTATION_RESERVE_POD) == "true":
            return
        key = cache_key(pod)
        old = self.records[node].get(key)
        if old is not None:
            self._apply(node, [old], -1)
        record = self.record(pod)
        self.records[node][key] = record
        self._apply(node, [record], +1)

    def pod_removed(self, pod: Pod, node: int) -> None:
        """``unAssign`` (Unreserve / delete)."""
        old = self.records[node].pop(cache_key(pod), None)
        if old is not None:
            self._apply(node, [old], -1)


def _column(values: list[bool]) -> BoolArray:
    result: BoolArray = np.array(values, dtype=bool).reshape(-1, 1)
    return result
