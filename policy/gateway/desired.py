"""Desired cluster state from plain inputs: the exact text schedboard writes.

Pure functions (no I/O, no Django): the policy services turn their models into these inputs,
and the same input always gives the same bytes, so a re-push of an unchanged policy compares
equal to what is in the cluster and writes nothing.

Formats follow Koordinator (see the shared LoadAware notes, §8): the node annotation
``scheduling.koordinator.sh/usage-thresholds`` holds a ``CustomUsageThresholds`` JSON, and the
``colocation-config`` key of ``koordinator-system/slo-controller-config`` a ``ColocationCfg``
JSON whose ``metricReportIntervalSeconds`` / ``metricAggregateDurationSeconds`` (cluster-wide,
and per ``nodeConfigs[]`` entry with a ``nodeSelector``) drive each NodeMetric's collect policy.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

USAGE_THRESHOLDS_ANNOTATION = "scheduling.koordinator.sh/usage-thresholds"
AGGREGATION_TYPES = ("avg", "p50", "p90", "p95", "p99")

REPORT_INTERVAL = "metricReportIntervalSeconds"
AGGREGATE_DURATION = "metricAggregateDurationSeconds"
COLLECT_FIELDS = (AGGREGATE_DURATION, REPORT_INTERVAL)


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys: one spelling per value, so equal means unchanged."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _percents(name: str, values: Mapping[str, int] | None) -> dict[str, int]:
    result: dict[str, int] = {}
    for resource, percent in (values or {}).items():
        if isinstance(percent, bool) or not isinstance(percent, int) or not 0 <= percent <= 100:
            raise ValueError(
                f"{name}[{resource}] must be an integer percent 0-100, not {percent!r}"
            )
        result[resource] = percent
    return result


def usage_thresholds_annotation(
    usage: Mapping[str, int] | None = None,
    prod: Mapping[str, int] | None = None,
    aggregated: Mapping[str, int] | None = None,
    aggregation_type: str = "",
    aggregated_duration: str = "",
) -> str | None:
    """The annotation's value, or None when every part is empty (no annotation at all).

    ``usage``/``prod``/``aggregated`` map resource names to integer percents; the aggregated
    thresholds need an ``aggregation_type`` (``p95``...) and may name a duration (``5m``).
    """
    thresholds: dict[str, Any] = {}
    if usage:
        thresholds["usageThresholds"] = _percents("usageThresholds", usage)
    if prod:
        thresholds["prodUsageThresholds"] = _percents("prodUsageThresholds", prod)
    if aggregated:
        if aggregation_type not in AGGREGATION_TYPES:
            raise ValueError(f"aggregation type must be one of {AGGREGATION_TYPES}")
        block: dict[str, Any] = {
            "usageThresholds": _percents("aggregatedUsage", aggregated),
            "usageAggregationType": aggregation_type,
        }
        if aggregated_duration:
            block["usageAggregatedDuration"] = aggregated_duration
        thresholds["aggregatedUsage"] = block
    return canonical_json(thresholds) if thresholds else None


def _seconds(name: str, value: int | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a whole number of seconds >= 1, not {value!r}")
    return value


def collect_policy(
    report_interval_seconds: int | None = None,
    aggregate_duration_seconds: int | None = None,
) -> dict[str, int | None]:
    """Cluster-wide collect fields for ``colocation-config``; None removes a field (Koordinator
    then uses its default: report every 60 s, average over 300 s)."""
    return {
        AGGREGATE_DURATION: _seconds(AGGREGATE_DURATION, aggregate_duration_seconds),
        REPORT_INTERVAL: _seconds(REPORT_INTERVAL, report_interval_seconds),
    }


def node_collect_config(
    name: str,
    match_labels: Mapping[str, str],
    report_interval_seconds: int | None = None,
    aggregate_duration_seconds: int | None = None,
) -> dict[str, Any]:
    """A ``nodeConfigs[]`` entry overriding the collect policy on the nodes a selector picks."""
    if not name:
        raise ValueError("a node config needs a name (it identifies the entry)")
    if not match_labels:
        raise ValueError("a node config needs a non-empty node selector")
    entry: dict[str, Any] = {
        "name": name,
        "nodeSelector": {"matchLabels": dict(sorted(match_labels.items()))},
    }
    for key, value in collect_policy(report_interval_seconds, aggregate_duration_seconds).items():
        if value is not None:
            entry[key] = value
    return entry
