"""Why LoadAwareScheduling filtered or scored a node the way it did, for people.

Koordinator users cannot see why a node was filtered (koordinator#2468 added a debug endpoint and
V5/V6 logs for that). Per node this shows: the NodeMetric's age and expiry, the threshold applied
and where it came from (args or node annotation; node, prod or aggregated profile), the measured
usage and its source (nodeUsage, a percentile window, or the fallback to estimates), what existing
pods and the incoming pod add, the resulting percentages, the score arithmetic, and a one-line
``summary`` such as "cpu 71% (58% measured + 13% estimated) > 65% threshold from node annotation".
Everything is computed with the same helpers as Filter and Score, for the one node.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import numpy as np

from scoring.durations import SECOND, format_duration
from scoring.framework import MAX_NODE_SCORE
from scoring.goint import quo, wrap_int64
from scoring.plugins.loadaware.args import LoadAwareArgs
from scoring.plugins.loadaware.estimator import go_round
from scoring.plugins.loadaware.filter import (
    REASON_AGGREGATED_USAGE,
    REASON_EXPIRED,
    REASON_USAGE,
    ThresholdChoice,
    choose,
    expired_nodes,
)
from scoring.plugins.loadaware.nodemetric import EPOCH
from scoring.plugins.loadaware.score import score_kind
from scoring.plugins.loadaware.state import IncomingPod, LoadAwareState
from scoring.plugins.loadaware.usage import UsageKind, base_usage, source_label
from scoring.snapshot import IntArray
from scoring.timeutil import format_time

MAX_LISTED_PODS = 20


def explain_node(
    args: LoadAwareArgs,
    weights: IntArray,
    state: LoadAwareState,
    pod: IncomingPod,
    now: datetime,
    node: int,
    *,
    filtered: bool = True,
    scored: bool = True,
) -> dict[str, Any]:
    """``filtered`` / ``scored``: whether Filter / Score ran in this cycle (the profile may enable
    the plugin at only one of them); the other section then says what it would have done."""
    names = state.resources
    filter_detail = {**_filter(args, state, pod, now, node), "evaluated": filtered}
    score_detail = {**_score(args, weights, state, pod, now, node), "evaluated": scored}
    return {
        "nodeMetric": _metric(args, state, now, node),
        "allocatableSource": "node.koordinator.sh/raw-allocatable annotation"
        if state.raw_allocatable[node]
        else "status.allocatable",
        "incomingPod": {
            "priorityClass": pod.priority or "none",
            "estimate": dict(zip(names, (int(v) for v in pod.estimate), strict=True)),
        },
        "filter": filter_detail,
        "score": score_detail,
        "estimatedPods": _estimated_pods(state, node),
        "summary": filter_detail["summary"]
        if filtered or not scored
        else _score_summary(score_detail),
    }


def _score_summary(detail: dict[str, Any]) -> str:
    """ "score 72 from node usage (cpu 52, memory 93)"."""
    if "why" in detail:
        return f"score {detail['score']}: {detail['why']}"
    parts = ", ".join(f"{name} {r['score']}" for name, r in detail["resources"].items())
    return f"score {detail['score']} from {detail['usageSource']} ({parts})"


def _metric(args: LoadAwareArgs, state: LoadAwareState, now: datetime, node: int) -> dict[str, Any]:
    parsed = state.metrics.parsed[node]
    if parsed is None:
        return {"present": False}
    out: dict[str, Any] = {
        "present": True,
        "updateTime": None,
        "ageSeconds": None,
        "expirationSeconds": args.node_metric_expiration_seconds,
        "expired": bool(expired_nodes(args, state, now)[node]),
        "reportIntervalSeconds": parsed.report_interval_ns / SECOND,
        "hasUsage": parsed.has_info,
    }
    if parsed.update_ns is not None:
        updated = EPOCH + timedelta(microseconds=parsed.update_ns // 1000)
        out["updateTime"] = format_time(updated)
        out["ageSeconds"] = (now - updated).total_seconds()
    return out


def _threshold_info(choice: ThresholdChoice, state: LoadAwareState, node: int) -> dict[str, Any]:
    profile = state.thresholds.profile(node)
    info: dict[str, Any] = {
        "profile": choice.profile,
        "source": choice.source,
        "thresholds": dict(zip(state.resources, choice.thresholds, strict=True)),
    }
    if choice.aggregated:
        info["aggregationType"] = choice.kind.aggregation
        info["aggregatedDuration"] = format_duration(choice.kind.duration)
    if profile.annotation_error is not None:
        info["annotationIgnored"] = profile.annotation_error
    return info


def _skip(reason: str, **extra: Any) -> dict[str, Any]:
    return {
        "checked": False,
        "passed": True,
        "reason": None,
        "why": reason,
        "summary": reason,
        **extra,
    }


def _filter(
    args: LoadAwareArgs, state: LoadAwareState, pod: IncomingPod, now: datetime, node: int
) -> dict[str, Any]:
    if pod.daemonset:
        return _skip("DaemonSet pods bypass the load filter")
    choice = choose(state.thresholds.profile(node), pod.prod)
    thresholds = _threshold_info(choice, state, node)
    if choice.disabled:
        return _skip("filter effectively off: every threshold is 0", thresholds=thresholds)
    metrics = state.metrics
    if not metrics.present[node]:
        return _skip("no NodeMetric: the node is not load-aware", thresholds=thresholds)
    expiry_checked = args.filter_expired_node_metrics and args.node_metric_expiration_seconds
    if expiry_checked and expired_nodes(args, state, now)[node]:
        if args.enable_schedule_when_node_metrics_expired is False:
            return {
                "checked": True,
                "passed": False,
                "reason": REASON_EXPIRED,
                "thresholds": thresholds,
                "summary": "NodeMetric expired",
            }
        return _skip(
            "NodeMetric expired; scheduling on expired metrics is enabled", thresholds=thresholds
        )
    if not metrics.has_info[node]:
        return _skip("NodeMetric has no usage (status.nodeMetric is empty)", thresholds=thresholds)
    return _usage_check(args, state, pod, choice, thresholds, node)


def _percent(used: int, total: int) -> int:
    """``int64(math.Round(float64(used) / float64(total) * 100))`` for one value."""
    return int(go_round(float(used) / float(total) * 100))


def _node_usage(
    kind: UsageKind, state: LoadAwareState, node: int
) -> tuple[list[int], list[int], bool]:
    """(measured, existing pods' estimate, window found) of one node, as Python ints."""
    base = base_usage(kind, state.metrics, state.cache, np.array([node]))
    return base.measured[:, 0].tolist(), base.estimated[:, 0].tolist(), bool(base.window_found[0])


def _usage_check(
    args: LoadAwareArgs,
    state: LoadAwareState,
    pod: IncomingPod,
    choice: ThresholdChoice,
    thresholds: dict[str, Any],
    node: int,
) -> dict[str, Any]:
    """Step 6 for one node, in scalar Go arithmetic (an independent check of the vector path)."""
    measured, existing, found = _node_usage(choice.kind, state, node)
    incoming = pod.estimate.tolist()
    allocatable = state.allocatable[:, node].tolist()
    resources: dict[str, Any] = {}
    failing: str | None = None
    for k, name in enumerate(state.resources):
        total = measured[k] + existing[k] + incoming[k]
        limit = choice.thresholds[k]
        checked = limit != 0 and allocatable[k] != 0
        percent = _percent(total, allocatable[k]) if allocatable[k] else None
        exceeds = checked and percent is not None and percent > limit
        if exceeds and failing is None:
            failing = name
        resources[name] = {
            "allocatable": allocatable[k],
            "measured": measured[k],
            "existingPodsEstimated": existing[k],
            "incomingEstimated": incoming[k],
            "estimated": total,
            "usagePercent": percent,
            "measuredPercent": _percent(measured[k], allocatable[k]) if allocatable[k] else None,
            "threshold": limit,
            "checked": checked,
            "exceeds": exceeds,
        }
    reason = None
    if failing is not None:
        template = REASON_AGGREGATED_USAGE if choice.aggregated else REASON_USAGE
        reason = template.format(failing)
    limiting = failing or _limiting(resources)
    return {
        "checked": True,
        "passed": failing is None,
        "reason": reason,
        "thresholds": thresholds,
        "usageSource": source_label(choice.kind, found, include_sys=args.prod_usage_include_sys),
        "resources": resources,
        "summary": _summary(limiting, resources, choice) if limiting else "no resource is checked",
    }


def _limiting(resources: dict[str, Any]) -> str | None:
    """The checked resource closest to its threshold."""
    checked = [
        (r["usagePercent"] / r["threshold"], name) for name, r in resources.items() if r["checked"]
    ]
    return max(checked)[1] if checked else None


def _summary(name: str, resources: dict[str, Any], choice: ThresholdChoice) -> str:
    r = resources[name]
    added = r["usagePercent"] - r["measuredPercent"]
    label = (
        name
        if choice.profile == "node"
        else f"{name} ({choice.kind.label if choice.aggregated else 'prod'})"
    )
    relation = ">" if r["exceeds"] else "<="
    return (
        f"{label} {r['usagePercent']}% ({r['measuredPercent']}% measured + {added}% estimated) "
        f"{relation} {r['threshold']}% threshold from {choice.source}"
    )


def _score(
    args: LoadAwareArgs,
    weights: IntArray,
    state: LoadAwareState,
    pod: IncomingPod,
    now: datetime,
    node: int,
) -> dict[str, Any]:
    kind = score_kind(args, pod)
    out: dict[str, Any] = {
        "usage": kind.label,
        "dominantResourceWeight": args.dominant_resource_weight,
    }
    metrics = state.metrics
    if args.dominant_resource_weight == 0 and not weights.any():
        return {**out, "score": 0, "why": "every weight is 0"}
    if not metrics.present[node]:
        return {**out, "score": 0, "why": "no NodeMetric"}
    if expired_nodes(args, state, now)[node]:
        return {**out, "score": 0, "why": "NodeMetric expired"}
    if not metrics.has_info[node]:
        return {**out, "score": 0, "why": "NodeMetric has no usage"}
    measured, existing, found = _node_usage(kind, state, node)
    incoming = pod.estimate.tolist()
    allocatable = state.allocatable[:, node].tolist()
    used = [m + e + i for m, e, i in zip(measured, existing, incoming, strict=True)]
    per_resource = [_least_used(u, a) for u, a in zip(used, allocatable, strict=True)]
    weight_list = weights.tolist()
    node_score = sum(s * w for s, w in zip(per_resource, weight_list, strict=True))
    dominant = args.dominant_resource_weight
    if dominant:
        node_score += min([MAX_NODE_SCORE, *per_resource]) * dominant
    weight_sum = sum(weight_list) + dominant
    out["usageSource"] = _score_source(kind, found, args)
    out["resources"] = {
        name: {
            "used": used[k],
            "allocatable": allocatable[k],
            "score": per_resource[k],
            "weight": weight_list[k],
        }
        for k, name in enumerate(state.resources)
    }
    return {**out, "score": quo(node_score, weight_sum) if weight_sum > 0 else 0}


def _least_used(used: int, capacity: int) -> int:
    """``leastUsedScore``, with Go's int64 wrap-around on the multiplication."""
    if capacity == 0 or used > capacity:
        return 0
    return quo(wrap_int64((capacity - used) * MAX_NODE_SCORE), capacity)


def _score_source(kind: UsageKind, found: bool, args: LoadAwareArgs) -> str:
    return source_label(kind, found, include_sys=args.prod_usage_include_sys)


def _estimated_pods(state: LoadAwareState, node: int) -> dict[str, Any]:
    """Existing pods whose estimate still counts (``nodeDeltaPods`` / ``prodDeltaPods``)."""
    metric = state.metrics.parsed[node]
    records = list(state.cache.records[node].values())
    cache = state.cache
    # Deltas are never negative: zero sums mean no pod adds anything (the common, cheap case).
    idle = not cache.node_delta[:, node].any() and not cache.prod_delta[:, node].any()
    if metric is None or not records or idle:
        return {"count": 0, "pods": []}
    node_delta, prod_delta, _, _ = state.cache.contributions(records, [metric] * len(records))
    listed = []
    for k, record in enumerate(records):
        if not (node_delta[k].any() or prod_delta[k].any()):
            continue
        flags = state.cache.flags(record, metric)
        listed.append(
            {
                "pod": record.pod.key,
                "reason": flags.reason or "reported as non-prod while the scheduler sees prod",
                "estimate": dict(zip(state.resources, record.estimate or (), strict=False)),
                "reportedUsage": dict(zip(state.resources, flags.usage, strict=True))
                if flags.usage is not None
                else None,
                "nodeDelta": dict(
                    zip(state.resources, (int(v) for v in node_delta[k]), strict=True)
                ),
                "prodDelta": dict(
                    zip(state.resources, (int(v) for v in prod_delta[k]), strict=True)
                ),
            }
        )
    return {"count": len(listed), "pods": listed[:MAX_LISTED_PODS]}
