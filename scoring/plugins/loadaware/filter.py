"""LoadAwareScheduling Filter over all nodes at once (load_aware.go ``Filter``).

Order, per node:

1. a pod owned by any DaemonSet passes;
2. the node's threshold profile (args or annotation) gives the thresholds: prod thresholds for a
   koord-prod pod when the node's prod thresholds are not all zero, else the aggregated
   thresholds when that profile is active, else the usage thresholds. All zero: pass (before any
   NodeMetric check);
3. no NodeMetric: pass (nodes without koordlet are not load-aware);
4. expired NodeMetric (nil updateTime, or age >= expiration, inclusive), checked only when
   ``filterExpiredNodeMetrics`` and ``nodeMetricExpirationSeconds`` are set: Unschedulable
   "node(s) nodeMetric expired" when ``enableScheduleWhenNodeMetricsExpired`` is explicitly
   false, else pass;
5. ``status.nodeMetric`` nil: pass;
6. for each resource in name order with a non-zero threshold and allocatable:
   ``round(float64(estimated) / float64(allocatable) * 100)`` (Go's ``math.Round``, in that
   float order) ``> threshold`` fails with the first such resource's reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from scoring.framework import FilterResult, Status, unschedulable
from scoring.plugins.loadaware.args import LoadAwareArgs
from scoring.plugins.loadaware.nodemetric import columns, time_ns
from scoring.plugins.loadaware.state import IncomingPod, LoadAwareState
from scoring.plugins.loadaware.thresholds import ThresholdProfile
from scoring.plugins.loadaware.usage import NODE_USAGE, PROD_USAGE, UsageKind, base_usage
from scoring.snapshot import BoolArray, IntArray

REASON_EXPIRED = "node(s) nodeMetric expired"
REASON_USAGE = "node(s) {} usage exceed threshold"
REASON_AGGREGATED_USAGE = "node(s) {} aggregated usage exceed threshold"

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class ThresholdChoice:
    """The thresholds one node applies to one pod, and where they came from."""

    profile: str  # "prod", "aggregated" or "node"
    kind: UsageKind
    thresholds: tuple[int, ...]
    source: str

    @property
    def aggregated(self) -> bool:
        return self.profile == "aggregated"

    @property
    def disabled(self) -> bool:
        return not any(self.thresholds)


def choose(profile: ThresholdProfile, pod_is_prod: bool) -> ThresholdChoice:
    """Step 2: prod, else aggregated, else node thresholds."""
    if pod_is_prod and any(profile.prod):
        return ThresholdChoice("prod", PROD_USAGE, profile.prod, profile.prod_source)
    agg = profile.aggregated
    if agg is not None:
        kind = UsageKind("aggregated", agg.kind, agg.duration)
        return ThresholdChoice("aggregated", kind, agg.thresholds, agg.source)
    return ThresholdChoice("node", NODE_USAGE, profile.usage, profile.usage_source)


def exceeds(ratio: FloatArray, bounds: FloatArray) -> BoolArray:
    """Go's ``int64(math.Round(ratio)) > limit`` with ``bounds = limit + 0.5``, vectorized.

    For integer L, ``round(x) > L`` iff ``round(x) >= L + 1``; rounding half away from zero, that
    is ``x >= L + 0.5`` for ``x >= 0`` and ``x > L + 0.5`` for ``x < 0`` (-1.5 rounds to -2).
    ``L + 0.5`` is exact in float64 for any threshold, so this matches the rounded comparison.
    """
    result: BoolArray = (ratio > bounds) | ((ratio == bounds) & (ratio >= 0))
    return result


def expired_nodes(args: LoadAwareArgs, state: LoadAwareState, now: datetime) -> BoolArray:
    """Nodes whose NodeMetric is expired (all False when the expiration is unset)."""
    seconds = args.node_metric_expiration_seconds
    key = ("expired", time_ns(now), seconds)
    cached = state.memo.get(key)
    if cached is None:
        metrics = state.metrics
        if seconds is None:
            cached = np.zeros(len(metrics.present), dtype=bool)
        else:
            cached = metrics.present & metrics.expired(time_ns(now) // 1000, seconds)
        state.memo = {k: v for k, v in state.memo.items() if k[0] != "expired"}
        state.memo[key] = cached
    result: BoolArray = cached
    return result


@dataclass(frozen=True)
class FilterPlan:
    """What the filter checks on every node for prod or non-prod pods (built once per snapshot).

    ``choices[g]`` is threshold group g's choice; ``candidates`` are nodes with a NodeMetric
    whose thresholds are not all zero; ``checked_limits`` marks the (node, resource) pairs with a
    threshold and an allocatable; ``kinds`` lists each base-usage kind with its nodes.
    """

    choices: list[ThresholdChoice]
    candidates: BoolArray
    limits: IntArray
    bounds: FloatArray  # limits + 0.5, see exceeds()
    checked_limits: BoolArray
    aggregated: BoolArray
    kinds: list[tuple[UsageKind, BoolArray]]


def filter_plan(state: LoadAwareState, pod_is_prod: bool) -> FilterPlan:
    key = ("filter-plan", pod_is_prod)
    plan = state.memo.get(key)
    if plan is None:
        plan = state.memo[key] = _build_plan(state, pod_is_prod)
    result: FilterPlan = plan
    return result


def _build_plan(state: LoadAwareState, pod_is_prod: bool) -> FilterPlan:
    choices = [choose(p, pod_is_prod) for p in state.thresholds.profiles]
    groups = state.thresholds.group_ids
    width = len(state.resources)
    limits = columns([c.thresholds for c in choices], width)[:, groups]
    enabled = np.array([not c.disabled for c in choices], dtype=bool)[groups]
    kinds = []
    for kind in dict.fromkeys(c.kind for c in choices):
        kinds.append((kind, np.array([c.kind == kind for c in choices], dtype=bool)[groups]))
    return FilterPlan(
        choices=choices,
        candidates=enabled & state.metrics.present,
        limits=limits,
        bounds=limits.astype(np.float64) + 0.5,
        checked_limits=(limits != 0) & (state.allocatable != 0),
        aggregated=np.array([c.aggregated for c in choices], dtype=bool)[groups],
        kinds=kinds,
    )


def estimated_usage(
    state: LoadAwareState, plan: FilterPlan, pod: IncomingPod, rows: IntArray | None = None
) -> IntArray:
    """Base usage of each node's kind plus the incoming estimate, for nodes ``rows`` (all when
    None)."""
    pick = slice(None) if rows is None else rows
    if not plan.kinds:  # a cluster without nodes
        empty: IntArray = np.zeros_like(state.allocatable[pick]) + pod.column
        return empty
    kind, _ = plan.kinds[0]
    total = base_usage(kind, state.metrics, state.cache, rows).total
    for kind, nodes in plan.kinds[1:]:
        usage = base_usage(kind, state.metrics, state.cache, rows).total
        total = np.where(nodes[pick], usage, total)
    result: IntArray = total + pod.column
    return result


def filter_nodes(
    args: LoadAwareArgs,
    state: LoadAwareState,
    pod: IncomingPod,
    now: datetime,
    rows: IntArray | None = None,
) -> FilterResult:
    """The Filter on nodes ``rows`` (all when None); the result is aligned with them."""
    metrics = state.metrics
    pick = slice(None) if rows is None else rows
    n = len(metrics.present) if rows is None else len(rows)
    if pod.daemonset:
        return FilterResult.success(n)
    plan = filter_plan(state, pod.prod)
    checked = plan.candidates[pick]
    failures: list[tuple[BoolArray, Status]] = []
    if args.filter_expired_node_metrics and args.node_metric_expiration_seconds is not None:
        expired = checked & expired_nodes(args, state, now)[pick]
        if args.enable_schedule_when_node_metrics_expired is False:
            failures.append((expired, unschedulable(REASON_EXPIRED)))
        checked = checked & ~expired
    checked = checked & metrics.has_info[pick]
    if checked.any():
        failures.extend(_usage_failures(state, plan, pod, checked, rows))
    return FilterResult.from_masks(n, failures)


def _usage_failures(
    state: LoadAwareState,
    plan: FilterPlan,
    pod: IncomingPod,
    checked: BoolArray,
    rows: IntArray | None,
) -> list[tuple[BoolArray, Status]]:
    """Step 6 on the ``checked`` nodes: one mask per (first failing resource, reason kind)."""
    pick = slice(None) if rows is None else rows
    estimated = estimated_usage(state, plan, pod, rows)
    ratio = estimated.astype(np.float64) / state.allocatable_float[:, pick] * 100.0
    fail = plan.checked_limits[:, pick] & exceeds(ratio, plan.bounds[:, pick]) & checked
    # First failing resource per node, one row at a time (cheaper than reductions over rows).
    first = np.full(len(checked), len(state.resources), dtype=np.int64)
    for k in reversed(range(len(state.resources))):
        first[fail[k]] = k
    failing = first < len(state.resources)
    if not failing.any():
        return []
    code = first * 2 + plan.aggregated[pick]
    out: list[tuple[BoolArray, Status]] = []
    for value in np.unique(code[failing]):
        column, is_agg = divmod(int(value), 2)
        template = REASON_AGGREGATED_USAGE if is_agg else REASON_USAGE
        mask: BoolArray = failing & (code == value)
        out.append((mask, unschedulable(template.format(state.resources[column]))))
    return out
