"""The values schedboard writes are deterministic and validated before any cluster sees them."""

from __future__ import annotations

import json

import pytest

from policy.gateway import desired


def test_usage_thresholds_are_canonical_json() -> None:
    value = desired.usage_thresholds_annotation(
        usage={"memory": 95, "cpu": 65},
        prod={"cpu": 55},
        aggregated={"cpu": 60},
        aggregation_type="p95",
        aggregated_duration="5m",
    )
    assert value == (
        '{"aggregatedUsage":{"usageAggregatedDuration":"5m","usageAggregationType":"p95",'
        '"usageThresholds":{"cpu":60}},"prodUsageThresholds":{"cpu":55},'
        '"usageThresholds":{"cpu":65,"memory":95}}'
    )
    # Same thresholds in another order: the same bytes, so a re-push writes nothing.
    again = desired.usage_thresholds_annotation(
        usage={"cpu": 65, "memory": 95},
        prod={"cpu": 55},
        aggregated={"cpu": 60},
        aggregation_type="p95",
        aggregated_duration="5m",
    )
    assert again == value


def test_no_thresholds_means_no_annotation() -> None:
    assert desired.usage_thresholds_annotation() is None
    assert desired.usage_thresholds_annotation(usage={}) is None


@pytest.mark.parametrize("percent", [-1, 101, 65.5, True, "65"])
def test_thresholds_must_be_integer_percents(percent: object) -> None:
    with pytest.raises(ValueError, match="integer percent"):
        desired.usage_thresholds_annotation(usage={"cpu": percent})  # type: ignore[dict-item]


def test_aggregated_thresholds_need_a_known_aggregation() -> None:
    with pytest.raises(ValueError, match="aggregation type"):
        desired.usage_thresholds_annotation(aggregated={"cpu": 60}, aggregation_type="p42")


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


def test_node_collect_config() -> None:
    entry = desired.node_collect_config("sb-gpu", {"pool": "gpu"}, report_interval_seconds=15)
    assert entry == {
        "name": "sb-gpu",
        "nodeSelector": {"matchLabels": {"pool": "gpu"}},
        "metricReportIntervalSeconds": 15,
    }
    json.dumps(entry)  # serializable as is
    with pytest.raises(ValueError, match="selector"):
        desired.node_collect_config("sb-all", {})
