"""LoadAwareScheduling's details (:mod:`scoring.plugins.loadaware.explain`) of many nodes as
columns: the same values, computed on arrays.

Nodes whose NodeMetric is fresh and has usage and whose thresholds are on (a cluster's usual
node) are computed together, one threshold group at a time, with the pods still estimated
listed node by node; the others (no or expired NodeMetric, thresholds off, DaemonSet pods) node
by node with :func:`explain_node`, as few as they are.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np

from scoring.columnar.format import INT, NULL
from scoring.columnar.values import (
    Bools,
    Floats,
    Interleave,
    Ints,
    Mixed,
    Plain,
    Records,
    Table,
    Values,
)
from scoring.durations import SECOND
from scoring.plugins.loadaware.args import LoadAwareArgs
from scoring.plugins.loadaware.explain import _estimated_pods, _threshold_info, explain_node
from scoring.plugins.loadaware.filter import (
    REASON_AGGREGATED_USAGE,
    REASON_USAGE,
    ThresholdChoice,
    choose,
    expired_nodes,
)
from scoring.plugins.loadaware.nodemetric import EPOCH
from scoring.plugins.loadaware.score import combine, least_used, score_kind
from scoring.plugins.loadaware.state import IncomingPod, LoadAwareState
from scoring.plugins.loadaware.usage import base_usage, source_label
from scoring.snapshot import BoolArray, IntArray
from scoring.timeutil import format_time

_NODE_KEYS = (
    "nodeMetric",
    "allocatableSource",
    "incomingPod",
    "filter",
    "score",
    "estimatedPods",
    "summary",
)
_METRIC_KEYS = (
    "present",
    "updateTime",
    "ageSeconds",
    "expirationSeconds",
    "expired",
    "reportIntervalSeconds",
    "hasUsage",
)
_FILTER_KEYS = (
    "checked",
    "passed",
    "reason",
    "thresholds",
    "usageSource",
    "resources",
    "summary",
    "evaluated",
)
_RESOURCE_KEYS = (
    "allocatable",
    "measured",
    "existingPodsEstimated",
    "incomingEstimated",
    "estimated",
    "usagePercent",
    "measuredPercent",
    "threshold",
    "checked",
    "exceeds",
)
_SCORE_KEYS = ("usage", "dominantResourceWeight", "usageSource", "resources", "score", "evaluated")
_SCORE_RESOURCE_KEYS = ("used", "allocatable", "score", "weight")


def explain_columns(
    args: LoadAwareArgs,
    weights: IntArray,
    state: LoadAwareState,
    pod: IncomingPod,
    now: datetime,
    nodes: IntArray,
    *,
    filtered: bool,
    scored: bool,
) -> Values:
    """:func:`explain_node` of each of ``nodes``, as one column."""
    usual = _usual(args, weights, state, pod, now, nodes)
    groups: list[tuple[IntArray, Values]] = []
    group_ids = state.thresholds.group_ids[nodes]
    for group in np.unique(group_ids[usual]).tolist():
        where = np.flatnonzero(usual & (group_ids == group))
        columns = _Usual(args, weights, state, pod, now, nodes[where], filtered, scored)
        groups.append((where, columns.records(state.thresholds.profiles[group])))
    rest = np.flatnonzero(~usual)
    details = [
        explain_node(args, weights, state, pod, now, node, filtered=filtered, scored=scored)
        for node in nodes[rest].tolist()
    ]
    groups.append((rest, Plain(details)))
    return Interleave(len(nodes), groups)


def _usual(
    args: LoadAwareArgs,
    weights: IntArray,
    state: LoadAwareState,
    pod: IncomingPod,
    now: datetime,
    nodes: IntArray,
) -> BoolArray:
    """The nodes computed together (see the module docstring)."""
    metrics = state.metrics
    if pod.daemonset or (args.dominant_resource_weight == 0 and not weights.any()):
        return np.zeros(len(nodes), dtype=bool)
    parsed = [metrics.parsed[i] for i in nodes.tolist()]
    dated = np.array([p is not None and p.update_ns is not None for p in parsed], dtype=bool)
    choices = [choose(profile, pod.prod) for profile in state.thresholds.profiles]
    enabled = np.array([not c.disabled for c in choices], dtype=bool)
    result: BoolArray = (
        dated
        & metrics.present[nodes]
        & metrics.has_info[nodes]
        & ~expired_nodes(args, state, now)[nodes]
        & enabled[state.thresholds.group_ids[nodes]]
    )
    return result


def _percent(used: IntArray, total: IntArray) -> IntArray:
    """``int64(math.Round(float64(used) / float64(total) * 100))`` where ``total`` is not 0."""
    ratio = used.astype(np.float64) / np.where(total == 0, 1, total).astype(np.float64) * 100
    whole = np.trunc(ratio)
    rounded = whole + np.where(np.abs(ratio - whole) >= 0.5, np.copysign(1.0, ratio), 0.0)
    result: IntArray = rounded.astype(np.int64)
    return result


def _maybe(values: IntArray, present: BoolArray) -> Values:
    """Integers where ``present``, null elsewhere."""
    return Mixed(np.where(present, INT, NULL), {INT: Ints(values[present])})


class _Usual:
    """The usual nodes of one threshold group, computed together."""

    def __init__(
        self,
        args: LoadAwareArgs,
        weights: IntArray,
        state: LoadAwareState,
        pod: IncomingPod,
        now: datetime,
        nodes: IntArray,
        filtered: bool,
        scored: bool,
    ) -> None:
        self.args, self.weights, self.state, self.pod, self.now = args, weights, state, pod, now
        self.nodes = nodes
        self.filtered, self.scored = filtered, scored
        self.count = len(nodes)
        self.allocatable = state.allocatable[:, nodes]

    def constant(self, value: Any) -> Table:
        return Table.constant(value, self.count)

    def records(self, profile: Any) -> Records:
        choice = choose(profile, self.pod.prod)
        first = int(self.nodes[0])
        thresholds = _threshold_info(choice, self.state, first)
        filter_columns, filter_summary = self.filter(choice, thresholds)
        score_columns, score_summary = self.score()
        names = self.state.resources
        fields: dict[str, Values] = {
            "nodeMetric": self.metric(),
            "allocatableSource": Table(
                self.state.raw_allocatable[self.nodes].astype(np.int64),
                ["status.allocatable", "node.koordinator.sh/raw-allocatable annotation"],
            ),
            "incomingPod": self.constant(
                {
                    "priorityClass": self.pod.priority or "none",
                    "estimate": dict(zip(names, (int(v) for v in self.pod.estimate), strict=True)),
                }
            ),
            "filter": filter_columns,
            "score": score_columns,
            "estimatedPods": self.estimated_pods(),
            "summary": Plain(filter_summary if self.filtered or not self.scored else score_summary),
        }
        return Records(self.count, [_NODE_KEYS], None, fields)

    def estimated_pods(self) -> Table:
        """``_estimated_pods`` of each node: the same empty list for the nodes whose pods add
        no estimate (deltas are never negative: zero sums mean none), listed for the others."""
        cache, nodes = self.state.cache, self.nodes
        busy = cache.node_delta[:, nodes].any(axis=0) | cache.prod_delta[:, nodes].any(axis=0)
        table: list[dict[str, Any]] = [{"count": 0, "pods": []}]
        ids = np.zeros(self.count, dtype=np.int64)
        for k in np.flatnonzero(busy).tolist():
            ids[k] = len(table)
            table.append(_estimated_pods(self.state, int(nodes[k])))
        return Table(ids, table)

    def metric(self) -> Records:
        parsed = [self.state.metrics.parsed[i] for i in self.nodes.tolist()]
        update_ns = np.array([p.update_ns if p else 0 for p in parsed], dtype=np.int64)
        interval = np.array([p.report_interval_ns if p else 0 for p in parsed], dtype=np.int64)
        micros = update_ns // 1000
        distinct, where = np.unique(micros, return_inverse=True)
        times = [format_time(EPOCH + timedelta(microseconds=int(us))) for us in distinct]
        now_us = (self.now - EPOCH) // timedelta(microseconds=1)
        fields: dict[str, Values] = {
            "present": self.constant(True),
            "updateTime": Table(where, times),
            "ageSeconds": Floats((now_us - micros) / 10**6),
            "expirationSeconds": self.constant(self.args.node_metric_expiration_seconds),
            "expired": self.constant(False),
            "reportIntervalSeconds": Floats(interval / SECOND),
            "hasUsage": Bools(np.array([bool(p and p.has_info) for p in parsed], dtype=bool)),
        }
        return Records(self.count, [_METRIC_KEYS], None, fields)

    def filter(
        self, choice: ThresholdChoice, thresholds: dict[str, Any]
    ) -> tuple[Records, list[str]]:
        """Step 6 (``_usage_check``) of these nodes, and each one's summary."""
        state = self.state
        base = base_usage(choice.kind, state.metrics, state.cache, self.nodes)
        measured, existing = base.measured, base.estimated
        incoming = self.pod.estimate.astype(np.int64)
        total = measured + existing + incoming[:, None]
        allocatable = self.allocatable
        limits = np.array(choice.thresholds, dtype=np.int64)
        has_total = allocatable != 0
        percent = _percent(total, allocatable)
        measured_percent = _percent(measured, allocatable)
        checked = (limits[:, None] != 0) & has_total
        exceeds = checked & (percent > limits[:, None])
        names = state.resources
        width = len(names)
        failing = np.full(self.count, width, dtype=np.int64)
        for k in reversed(range(width)):
            failing[exceeds[k]] = k
        template = REASON_AGGREGATED_USAGE if choice.aggregated else REASON_USAGE
        resources: dict[str, Values] = {}
        for k, name in enumerate(names):
            columns: dict[str, Values] = {
                "allocatable": Ints(allocatable[k]),
                "measured": Ints(measured[k]),
                "existingPodsEstimated": Ints(existing[k]),
                "incomingEstimated": self.constant(int(incoming[k])),
                "estimated": Ints(total[k]),
                "usagePercent": _maybe(percent[k], has_total[k]),
                "measuredPercent": _maybe(measured_percent[k], has_total[k]),
                "threshold": self.constant(int(limits[k])),
                "checked": Bools(checked[k]),
                "exceeds": Bools(exceeds[k]),
            }
            resources[name] = Records(self.count, [_RESOURCE_KEYS], None, columns)
        limiting = self.limiting(failing, percent, limits, checked)
        summaries = self.filter_summaries(choice, limiting, percent, measured_percent, exceeds)
        fields: dict[str, Values] = {
            "checked": self.constant(True),
            "passed": Bools(failing == width),
            "reason": Table(failing, [template.format(name) for name in names] + [None]),
            "thresholds": self.constant(thresholds),
            "usageSource": Table(
                base.window_found.astype(np.int64),
                [
                    source_label(choice.kind, found, include_sys=self.args.prod_usage_include_sys)
                    for found in (False, True)
                ],
            ),
            "resources": Records(self.count, [tuple(names)], None, resources),
            "summary": Plain(summaries),
            "evaluated": self.constant(self.filtered),
        }
        return Records(self.count, [_FILTER_KEYS], None, fields), summaries

    def limiting(
        self, failing: IntArray, percent: IntArray, limits: IntArray, checked: BoolArray
    ) -> IntArray:
        """The failing resource, else the checked one closest to its threshold (``_limiting``:
        the highest ratio, then the last name); the resource count where none is checked."""
        names = self.state.resources
        width = len(names)
        best = np.full(self.count, -np.inf)
        chosen = np.full(self.count, width, dtype=np.int64)
        safe = np.where(limits == 0, 1, limits).astype(np.float64)
        for k in sorted(range(width), key=names.__getitem__):
            ratio = percent[k].astype(np.float64) / safe[k]
            better = checked[k] & (ratio >= best)
            best = np.where(better, ratio, best)
            chosen = np.where(better, k, chosen)
        result: IntArray = np.where(failing < width, failing, chosen)
        return result

    def filter_summaries(
        self,
        choice: ThresholdChoice,
        limiting: IntArray,
        percent: IntArray,
        measured_percent: IntArray,
        exceeds: BoolArray,
    ) -> list[str]:
        names = self.state.resources
        aggregated = choice.kind.label if choice.aggregated else "prod"
        labels = [name if choice.profile == "node" else f"{name} ({aggregated})" for name in names]
        limits = choice.thresholds
        out = []
        columns = np.arange(self.count)
        safe = np.minimum(limiting, len(names) - 1)
        usage = percent[safe, columns].tolist()
        measured = measured_percent[safe, columns].tolist()
        over = exceeds[safe, columns].tolist()
        for k, p, m, e in zip(limiting.tolist(), usage, measured, over, strict=True):
            if k == len(names):
                out.append("no resource is checked")
                continue
            relation = ">" if e else "<="
            out.append(
                f"{labels[k]} {p}% ({m}% measured + {p - m}% estimated) "
                f"{relation} {limits[k]}% threshold from {choice.source}"
            )
        return out

    def score(self) -> tuple[Records, list[str]]:
        """The score section of these nodes (``_score``), and each one's summary."""
        args, state = self.args, self.state
        kind = score_kind(args, self.pod)
        base = base_usage(kind, state.metrics, state.cache, self.nodes)
        used = base.total + self.pod.estimate.astype(np.int64)[:, None]
        per_resource = least_used(used, self.allocatable)
        scores = combine(per_resource, self.weights, args.dominant_resource_weight)
        labels = [
            source_label(kind, found, include_sys=args.prod_usage_include_sys)
            for found in (False, True)
        ]
        found = base.window_found.astype(np.int64)
        names = state.resources
        weights = self.weights.tolist()
        resources: dict[str, Values] = {
            name: Records(
                self.count,
                [_SCORE_RESOURCE_KEYS],
                None,
                {
                    "used": Ints(used[k]),
                    "allocatable": Ints(self.allocatable[k]),
                    "score": Ints(per_resource[k]),
                    "weight": self.constant(weights[k]),
                },
            )
            for k, name in enumerate(names)
        }
        fields: dict[str, Values] = {
            "usage": self.constant(kind.label),
            "dominantResourceWeight": self.constant(args.dominant_resource_weight),
            "usageSource": Table(found, labels),
            "resources": Records(self.count, [tuple(names)], None, resources),
            "score": Ints(scores),
            "evaluated": self.constant(self.scored),
        }
        rows = zip(scores.tolist(), found.tolist(), per_resource.T.tolist(), strict=True)
        summaries = [
            f"score {score} from {labels[source]} ("
            + ", ".join(f"{name} {s}" for name, s in zip(names, each, strict=True))
            + ")"
            for score, source, each in rows
        ]
        return Records(self.count, [_SCORE_KEYS], None, fields), summaries
