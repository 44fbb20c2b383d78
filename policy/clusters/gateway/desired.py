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

REPORT_INTERVAL = "metricReportIntervalSeconds"
AGGREGATE_DURATION = "metricAggregateDurationSeconds"
COLLECT_FIELDS = (AGGREGATE_DURATION, REPORT_INTERVAL)


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys: one spelling per value, so equal means unchanged."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def usage_thresholds_annotation(thresholds: Mapping[str, Any]) -> str | None:
    """The annotation's text for a ``CustomUsageThresholds`` object (the engine builds it from
    a validated policy), or None when it is empty (no annotation at all)."""
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
