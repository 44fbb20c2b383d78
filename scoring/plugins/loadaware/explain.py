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

from scoring.plugins.loadaware.args import LoadAwareArgs
from scoring.plugins.loadaware.duration import SECOND, format_duration
from scoring.plugins.loadaware.filter import (
    REASON_AGGREGATED_USAGE,
    REASON_EXPIRED,
    REASON_USAGE,
    ThresholdChoice,
    choose,
    expired_nodes,
    usage_percent,
)
from scoring.plugins.loadaware.nodemetric import EPOCH
from scoring.plugins.loadaware.score import combine, least_used, score_kind
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


def _usage_check(
    args: LoadAwareArgs,
    state: LoadAwareState,
    pod: IncomingPod,
    choice: ThresholdChoice,
    thresholds: dict[str, Any],
    node: int,
) -> dict[str, Any]:
    rows = np.array([node])
    base = base_usage(choice.kind, state.metrics, state.cache, rows)
    measured, existing = base.measured[:, 0], base.estimated[:, 0]
    total = base.total[:, 0] + pod.estimate
    allocatable = state.allocatable[:, node]
    percent = usage_percent(total, allocatable)
    measured_percent = usage_percent(measured, allocatable)
    resources: dict[str, Any] = {}
    failing: str | None = None
    for k, name in enumerate(state.resources):
        limit = choice.thresholds[k]
        checked = bool(limit != 0 and allocatable[k] != 0)
        exceeds = bool(checked and percent[k] > limit)
        if exceeds and failing is None:
            failing = name
        resources[name] = {
            "allocatable": int(allocatable[k]),
            "measured": int(measured[k]),
            "existingPodsEstimated": int(existing[k]),
            "incomingEstimated": int(pod.estimate[k]),
            "estimated": int(total[k]),
            "usagePercent": int(percent[k]) if allocatable[k] else None,
            "measuredPercent": int(measured_percent[k]) if allocatable[k] else None,
            "threshold": limit,
            "checked": checked,
            "exceeds": exceeds,
        }
    source = source_label(
        choice.kind, bool(base.window_found[0]), include_sys=args.prod_usage_include_sys
    )
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
        "usageSource": source,
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
    base = base_usage(kind, metrics, state.cache, np.array([node]))
    used = base.total + pod.column
    allocatable = state.allocatable[:, [node]]
    per_resource = least_used(used, allocatable)
    score = int(combine(per_resource, weights, args.dominant_resource_weight)[0])
    out["usageSource"] = _score_source(kind, bool(base.window_found[0]), args)
    out["resources"] = {
        name: {
            "used": int(used[k, 0]),
            "allocatable": int(allocatable[k, 0]),
            "score": int(per_resource[k, 0]),
            "weight": int(weights[k]),
        }
        for k, name in enumerate(state.resources)
    }
    return {**out, "score": score}


def _score_source(kind: UsageKind, found: bool, args: LoadAwareArgs) -> str:
    return source_label(kind, found, include_sys=args.prod_usage_include_sys)


def _estimated_pods(state: LoadAwareState, node: int) -> dict[str, Any]:
    """Existing pods whose estimate still counts (``nodeDeltaPods`` / ``prodDeltaPods``)."""
    metric = state.metrics.parsed[node]
    records = list(state.cache.records[node].values())
    if metric is None or not records:
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
