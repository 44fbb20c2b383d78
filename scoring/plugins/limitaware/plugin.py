"""``LimitAware``: spread pod *limits* across nodes, scoring by limit headroom.

Upstream: koordinator-sh/koordinator@9ddd4fb2 pkg/scheduler/plugins/limitaware (plugin.go,
filtering.go, scoring.go, least_allocated.go), implementing scheduler-plugins KEP-217
("Resource limit-aware node scoring"), whose formula it follows:

    raw = Σ_r w_r · (cap_r − limits_r) · 100 / cap_r  /  Σ_r w_r     (Go int math, may be < 0)

with ``cap_r = allocatable_r × ratio_r / 100`` and ``limits_r`` the node's summed (non-zero)
limits plus the pod's. Only resources listed in the node's ratio map with a non-zero capacity
count. NormalizeScore maps [min, max] onto [0, 100] (truncating; all 0 when min == max).
Filter rejects a node whose remaining limit capacity is below the pod's limit, per listed
resource, with ``Insufficient <resource> limit``; DaemonSet pods always pass.

A node whose ratio cannot be read (a bad annotation) fails Filter with the Go error text; if
such a node reaches Score, Score fails and with it the pod's scheduling cycle, as upstream.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from scoring.columnar.values import Values
from scoring.framework import (
    MAX_NODE_SCORE,
    SUCCESS,
    Cycle,
    FilterResult,
    Plugin,
    PluginError,
    Status,
    error,
    unschedulable,
)
from scoring.goint import quo, quo_array
from scoring.plugins.limitaware.explain import explain_columns, explain_node
from scoring.plugins.limitaware.limits import (
    BASE_RESOURCES,
    NON_ZERO,
    RAW,
    LimitTotals,
    PodLimits,
    pod_limits,
)
from scoring.plugins.limitaware.ratio import NodeRatios
from scoring.snapshot import NODE_EVENT, POD_EVENT, BoolArray, IntArray, Snapshot

POD_LIMITS = "LimitAware/pod-limits"
# Up to this many nodes, per-node Python is cheaper than setting up arrays (cache recomputation).
FEW_NODES = 8


class LimitAware(Plugin):
    """Koordinator's LimitAware Filter and Score (with NormalizeScore)."""

    name = "LimitAware"
    # Reserve adds the pod to the limit cache upstream; here ``LimitTotals`` follows the snapshot.
    points = frozenset({"preFilter", "filter", "preScore", "score", "reserve"})
    normalizes = True
    depends_on = frozenset({POD_EVENT, NODE_EVENT})

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__(args)
        weights: Mapping[str, Any] = args.get("scoringResourceWeights") or {}
        self.weights = {str(name): int(weight) for name, weight in weights.items()}
        self.default_ratio: dict[str, Any] = dict(args.get("defaultLimitToAllocatableRatio") or {})
        self._ratio_key = "limitaware.ratios:" + json.dumps(self.default_ratio, sort_keys=True)

    # -- shared data ---------------------------------------------------------------------------

    def totals(self, snapshot: Snapshot) -> LimitTotals:
        return snapshot.extension("limitaware.totals", LimitTotals)

    def ratios(self, snapshot: Snapshot) -> NodeRatios:
        ratios = snapshot.extension(self._ratio_key, lambda s: NodeRatios(s, self.default_ratio))
        return ratios.current()

    def pod_limits(self, cycle: Cycle) -> PodLimits:
        if POD_LIMITS not in cycle.state:
            cycle.state[POD_LIMITS] = pod_limits(cycle.pod)
        limits: PodLimits = cycle.state[POD_LIMITS]
        return limits

    # -- Filter ----------------------------------------------------------------------------------

    def filter(self, cycle: Cycle) -> FilterResult:
        return self._filter(cycle, slice(None), len(cycle.snapshot))

    def filter_nodes(self, cycle: Cycle, nodes: IntArray) -> FilterResult:
        if len(nodes) <= FEW_NODES:  # a cache recomputing a few nodes: no array set-up
            return FilterResult.from_statuses(self._filter_node(cycle, int(n)) for n in nodes)
        return self._filter(cycle, nodes, len(nodes))

    def _filter_node(self, cycle: Cycle, node: int) -> Status:
        """:meth:`_filter` on one node, in Python ints."""
        if any(ref.get("kind") == "DaemonSet" for ref in cycle.pod.owner_references):
            return SUCCESS
        ratios = self.ratios(cycle.snapshot)
        if ratios.error_ids[node] >= 0:
            return error(ratios.error_messages[int(ratios.error_ids[node])])
        limits = self.pod_limits(cycle)
        if limits.empty:
            return SUCCESS
        totals = self.totals(cycle.snapshot)
        reasons = []
        for name in (*BASE_RESOURCES, *sorted(limits.scalars)):
            listed, capacity = ratios.capacity(name)
            free = int(capacity[node]) - int(totals.column(RAW, name)[node])
            if listed[node] and limits.raw[name] > free:
                reasons.append(f"Insufficient {name} limit")
        return unschedulable(*reasons) if reasons else SUCCESS

    def _filter(self, cycle: Cycle, rows: slice | IntArray, n: int) -> FilterResult:
        """Filter on the ``rows`` nodes (``n`` of them)."""
        if any(ref.get("kind") == "DaemonSet" for ref in cycle.pod.owner_references):
            return FilterResult.success(n)
        ratios = self.ratios(cycle.snapshot)
        limits = self.pod_limits(cycle)
        checks: list[tuple[str, BoolArray]] = []
        if not limits.empty:
            totals = self.totals(cycle.snapshot)
            for name in (*BASE_RESOURCES, *sorted(limits.scalars)):
                listed, capacity = ratios.capacity(name)
                listed, capacity = listed[rows], capacity[rows]
                free = capacity - totals.column(RAW, name)[rows]
                checks.append((f"Insufficient {name} limit", listed & (limits.raw[name] > free)))
        return _verdicts(n, ratios, checks, rows)

    # -- Score -----------------------------------------------------------------------------------

    def score(self, cycle: Cycle, feasible: IntArray) -> IntArray:
        ratios = self.ratios(cycle.snapshot)
        broken = ratios.error_ids[feasible]
        if (broken >= 0).any():
            raise PluginError(ratios.error_messages[int(broken[broken >= 0][0])])
        totals = self.totals(cycle.snapshot)
        limits = self.pod_limits(cycle)
        if len(feasible) <= FEW_NODES:  # a cache recomputing a few nodes: no array set-up
            scores = [self._score_node(ratios, totals, limits, n) for n in feasible.tolist()]
            return np.array(scores, dtype=np.int64)
        total = np.zeros(len(feasible), dtype=np.int64)
        weight_sum = np.zeros(len(feasible), dtype=np.int64)
        for name in sorted(self.weights):
            listed, capacity = (a[feasible] for a in ratios.capacity(name))
            used = totals.column(NON_ZERO, name)[feasible] + limits.non_zero.get(name, 0)
            counted = listed & (capacity != 0)
            safe = np.where(capacity == 0, 1, capacity)
            headroom = quo_array((capacity - used) * MAX_NODE_SCORE, safe)
            total += np.where(counted, headroom * self.weights[name], 0)
            weight_sum += np.where(counted, self.weights[name], 0)
        raw = quo_array(total, np.where(weight_sum == 0, 1, weight_sum))
        raw[weight_sum == 0] = 0
        return raw

    def _score_node(
        self, ratios: NodeRatios, totals: LimitTotals, limits: PodLimits, node: int
    ) -> int:
        """The Score of one node, in the same integer arithmetic."""
        total = weight_sum = 0
        for name in sorted(self.weights):
            listed, capacity = ratios.capacity(name)
            cap = int(capacity[node])
            if not listed[node] or cap == 0:
                continue
            used = int(totals.column(NON_ZERO, name)[node]) + limits.non_zero.get(name, 0)
            total += quo((cap - used) * MAX_NODE_SCORE, cap) * self.weights[name]
            weight_sum += self.weights[name]
        return quo(total, weight_sum) if weight_sum else 0

    def normalize(self, cycle: Cycle, scores: IntArray) -> IntArray:
        """Min–max onto [0, 100] in float64, truncated; every node 0 when all scores are equal."""
        if len(scores) == 0:
            return scores
        low, spread = int(scores.min()), int(scores.max() - scores.min())
        if spread <= 0:
            return np.zeros_like(scores)
        scaled = float(MAX_NODE_SCORE) * ((scores - low).astype(np.float64) / float(spread))
        return scaled.astype(np.int64)

    # -- Explanation -------------------------------------------------------------------------------

    def explain(self, cycle: Cycle, node: int) -> Mapping[str, Any] | None:
        return explain_node(self, cycle, node)

    def explain_columns(self, cycle: Cycle, nodes: IntArray) -> Values:
        return explain_columns(self, cycle, nodes)


def _verdicts(
    n: int, ratios: NodeRatios, checks: list[tuple[str, BoolArray]], rows: slice | IntArray
) -> FilterResult:
    """One status per node: Error for an unreadable ratio, else every failed check's reason."""
    if n <= FEW_NODES:
        return FilterResult.from_statuses(_node_verdict(ratios, checks, rows, k) for k in range(n))
    ids = np.full(n, -1, dtype=np.int32)
    statuses: list[Status] = []
    if checks:
        failed = np.stack([mask for _, mask in checks], axis=1)
        codes = failed.astype(np.int64) @ (1 << np.arange(len(checks), dtype=np.int64))
        for code in np.unique(codes[codes > 0]):
            reasons = [reason for k, (reason, _) in enumerate(checks) if int(code) >> k & 1]
            ids[codes == code] = len(statuses)
            statuses.append(unschedulable(*reasons))
    if ratios.error_messages:
        broken = ratios.error_mask[rows]
        ids = np.where(broken, ratios.error_ids[rows] + len(statuses), ids).astype(np.int32)
        statuses.extend(error(message) for message in ratios.error_messages)
    return FilterResult(ids, statuses)


def _node_verdict(
    ratios: NodeRatios, checks: list[tuple[str, BoolArray]], rows: slice | IntArray, k: int
) -> Status:
    """:func:`_verdicts` for the ``k``-th of the ``rows`` nodes."""
    node = k if isinstance(rows, slice) else int(rows[k])  # the slice is always "every node"
    if ratios.error_ids[node] >= 0:
        return error(ratios.error_messages[int(ratios.error_ids[node])])
    reasons = [reason for reason, mask in checks if mask[k]]
    return unschedulable(*reasons) if reasons else SUCCESS
