"""LoadAwareScheduling Score (load_aware.go ``Score``, ``loadAwareSchedulingScorer``).

No NormalizeScore. Per node, with ``used = base + incoming estimate``:

- weights all zero and ``dominantResourceWeight == 0``: 0 (impossible after defaulting);
- base kind: prod usage when ``scoreAccordingProdUsage`` and the pod is koord-prod, else the
  ``aggregated.scoreAggregationType`` window when set, else node usage;
- no NodeMetric, an expired one (whenever ``nodeMetricExpirationSeconds`` is set, regardless of
  the filter flags), or a nil ``status.nodeMetric``: 0;
- ``s_i = (alloc_i - used_i) * 100 / alloc_i`` in int64 (0 when alloc is 0 or used > alloc);
  ``score = (Σ s_i·w_i + dominant·min(100, min_i s_i)) / (Σ w_i + dominant)``, the min running
  over every resource in the vector, weighted or not.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np

from scoring.framework import MAX_NODE_SCORE
from scoring.goint import quo_array
from scoring.plugins.loadaware.args import LoadAwareArgs
from scoring.plugins.loadaware.filter import expired_nodes
from scoring.plugins.loadaware.state import IncomingPod, LoadAwareState
from scoring.plugins.loadaware.usage import NODE_USAGE, PROD_USAGE, UsageKind, base_usage
from scoring.snapshot import BoolArray, IntArray

# Nodes are gathered first when they are fewer than 1/SUBSET_SHARE of the cluster.
SUBSET_SHARE = 8


def score_kind(args: LoadAwareArgs, pod: IncomingPod) -> UsageKind:
    """Which base usage Score uses for this pod."""
    if args.score_according_prod_usage and pod.prod:
        return PROD_USAGE
    agg = args.aggregated
    if agg is not None and agg.score_aggregation_type:
        return UsageKind("aggregated", agg.score_aggregation_type, agg.score_aggregated_duration)
    return NODE_USAGE


def least_used(used: IntArray, allocatable: IntArray) -> IntArray:
    """``leastUsedScore`` element-wise (int64, Go division)."""
    safe = np.where(allocatable == 0, 1, allocatable)
    score = quo_array((allocatable - used) * MAX_NODE_SCORE, safe)
    result: IntArray = np.where((allocatable == 0) | (used > allocatable), 0, score)
    return result


def combine(per_resource: IntArray, weights: IntArray, dominant_weight: int) -> IntArray:
    """``loadAwareSchedulingScorer`` over per-resource scores (resources × nodes).

    Rows are combined one resource at a time: numpy reductions across a handful of rows are far
    slower than the same number of whole-row operations.
    """
    node_score = np.zeros(per_resource.shape[1], dtype=np.int64)
    for k, weight in enumerate(weights.tolist()):
        if weight:
            node_score += per_resource[k] * weight
    weight_sum = int(weights.sum()) + dominant_weight
    if dominant_weight != 0:
        dominant = np.full(per_resource.shape[1], MAX_NODE_SCORE, dtype=np.int64)
        for row in per_resource:
            np.minimum(dominant, row, out=dominant)
        node_score += dominant * dominant_weight
    if weight_sum <= 0:
        return np.zeros(per_resource.shape[1], dtype=np.int64)
    return quo_array(node_score, weight_sum)


def scored_nodes(args: LoadAwareArgs, state: LoadAwareState, now: datetime) -> BoolArray:
    """Nodes Score does not short-circuit to 0."""
    metrics = state.metrics
    result: BoolArray = metrics.present & metrics.has_info & ~expired_nodes(args, state, now)
    return result


def score_nodes(
    args: LoadAwareArgs,
    weights: IntArray,
    state: LoadAwareState,
    pod: IncomingPod,
    now: datetime,
    feasible: IntArray,
) -> IntArray:
    """Scores of the ``feasible`` nodes; computed over all nodes, which is cheaper than gathering
    the feasible columns first, unless they are a small share (a cache recomputing a few)."""
    if args.dominant_resource_weight == 0 and not weights.any():
        return np.zeros(len(feasible), dtype=np.int64)
    rows = feasible if len(feasible) * SUBSET_SHARE < len(state.metrics.present) else None
    used = base_usage(score_kind(args, pod), state.metrics, state.cache, rows).total + pod.column
    allocatable = state.allocatable if rows is None else state.allocatable[:, rows]
    scores = combine(least_used(used, allocatable), weights, args.dominant_resource_weight)
    scored = scored_nodes(args, state, now)
    result: IntArray = (
        np.where(scored, scores, 0)[feasible] if rows is None else np.where(scored[rows], scores, 0)
    )
    return result
