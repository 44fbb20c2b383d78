"""The values schedboard writes are deterministic and validated before any cluster sees them."""

from __future__ import annotations

import pytest

from policy.clusters.gateway import desired
from scoring.plugins.loadaware.thresholds import custom_usage_thresholds


def test_usage_thresholds_are_canonical_json() -> None:
    value = desired.usage_thresholds_annotation(
        custom_usage_thresholds(
            usage={"memory": 95, "cpu": 65},
            prod={"cpu": 55},
            aggregated={"cpu": 60},
            aggregation_type="p95",
            aggregated_duration="5m",
        )
    )
    assert value == (
        '{"aggregatedUsage":{"usageAggregatedDuration":"5m","usageAggregationType":"p95",'
        '"usageThresholds":{"cpu":60}},"prodUsageThresholds":{"cpu":55},'
        '"usageThresholds":{"cpu":65,"memory":95}}'
    )
    # Same thresholds in another order: the same bytes, so a re-push writes nothing.
    again = desired.usage_thresholds_annotation(
        {
            "usageThresholds": {"cpu": 65, "memory": 95},
            "prodUsageThresholds": {"cpu": 55},
            "aggregatedUsage": {
                "usageAggregationType": "p95",
                "usageThresholds": {"cpu": 60},
                "usageAggregatedDuration": "5m",
            },
        }
    )
    assert again == value


def test_no_thresholds_means_no_annotation() -> None:
    assert desired.usage_thresholds_annotation(custom_usage_thresholds()) is None
    assert desired.usage_thresholds_annotation(custom_usage_thresholds(usage={})) is None


def test_collect_policy_fields() -> None:
    assert desired.collect_policy(30, 600) == {
        "metricAggregateDurationSeconds": 600,
        "metricReportIntervalSeconds": 30,
    }
    assert desired.collect_policy() == {
        "metricAggregateDurationSeconds": None,
        "metricReportIntervalSeconds": None,
    }
    with pytest.raises(ValueError, match=">= 1"):
        desired.collect_policy(0)
