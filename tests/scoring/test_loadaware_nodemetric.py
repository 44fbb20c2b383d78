"""NodeMetric ingestion (pod_assign_cache.go ``AddOrUpdateNodeMetric``, TestNodeMetric)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.durations import HOUR, MINUTE, SECOND
from scoring.object_fields import ObjectError
from scoring.plugins.loadaware.nodemetric import (
    DEFAULT_REPORT_INTERVAL_NS,
    NodeMetrics,
    amount,
    parse_node_metric,
)
from scoring.quantity import resource_amount
from tests.scoring.builders import make_node
from tests.scoring.loadaware_vectors import snapshot_of

GI = 1 << 30
R = ("cpu", "memory")


def nm(
    status: dict[str, Any], spec: dict[str, Any] | None = None, name: str = "n"
) -> dict[str, Any]:
    return {
        "apiVersion": "slo.koordinator.sh/v1alpha1",
        "kind": "NodeMetric",
        "metadata": {"name": name},
        "spec": spec or {},
        "status": status,
    }


def res(cpu: str, memory: str) -> dict[str, Any]:
    return {"resources": {"cpu": cpu, "memory": memory}}


def test_upstream_node_metric_case() -> None:
    """TestNodeMetric "enable prod usage include sys": windows, and the longest per type filed
    under duration 0."""
    parsed = parse_node_metric(
        nm(
            {
                "updateTime": "2026-07-24T12:00:00Z",
                "nodeMetric": {
                    "nodeUsage": res("2", "4Gi"),
                    "systemUsage": res("2", "4Gi"),
                    "aggregatedNodeUsages": [
                        {
                            "duration": "1m0s",
                            "usage": {"avg": res("1", "2Gi"), "p90": res("2", "4Gi")},
                        },
                        {
                            "duration": "1h0m0s",
                            "usage": {"avg": res("500m", "1Gi"), "p90": res("1500m", "3Gi")},
                        },
                    ],
                },
            },
            {"metricCollectPolicy": {"reportIntervalSeconds": 180}},
        ),
        R,
    )
    assert parsed.report_interval_ns == 180 * SECOND
    assert parsed.node_usage == parsed.system_usage == (2000, 4 * GI)
    assert parsed.aggregated == {
        ("avg", 0): (500, GI),
        ("p90", 0): (1500, 3 * GI),
        ("avg", MINUTE): (1000, 2 * GI),
        ("p90", MINUTE): (2000, 4 * GI),
        ("avg", HOUR): (500, GI),
        ("p90", HOUR): (1500, 3 * GI),
    }


def test_empty_windows_are_skipped_for_the_longest() -> None:
    parsed = parse_node_metric(
        nm(
            {
                "nodeMetric": {
                    "aggregatedNodeUsages": [
                        {"duration": "5m", "usage": {"p95": res("1", "1Gi")}},
                        {"duration": "30m", "usage": {"p95": {"resources": {}}}},
                    ]
                }
            }
        ),
        R,
    )
    assert parsed.aggregated == {("p95", 5 * MINUTE): (1000, GI), ("p95", 0): (1000, GI)}


def test_pod_metrics() -> None:
    """nil entries and empty usage are skipped; a later duplicate wins, "prod" sticks."""
    parsed = parse_node_metric(
        nm(
            {
                "podsMetric": [
                    None,
                    {"name": "invalid"},
                    {
                        "namespace": "default",
                        "name": "a",
                        "priority": "koord-prod",
                        "podUsage": res("1", "1Gi"),
                    },
                    {
                        "namespace": "default",
                        "name": "b",
                        "priority": "koord-mid",
                        "podUsage": res("2", "2Gi"),
                    },
                    {"namespace": "default", "name": "a", "podUsage": res("3", "3Gi")},
                    {
                        "namespace": "default",
                        "name": "gpu-only",
                        "podUsage": {"resources": {"nvidia.com/gpu": "1"}},
                    },
                ]
            }
        ),
        R,
    )
    assert parsed.pod_usages == {
        ("default", "a"): (3000, 3 * GI),
        ("default", "b"): (2000, 2 * GI),
        ("default", "gpu-only"): (0, 0),  # a non-empty list outside the vector: reported, zeros
    }
    assert parsed.prod_pods == {("default", "a")}


def test_defaults_and_nil_parts() -> None:
    parsed = parse_node_metric(nm({}), R)
    assert (parsed.update_ns, parsed.has_info, parsed.report_interval_ns) == (
        None,
        False,
        DEFAULT_REPORT_INTERVAL_NS,
    )
    assert parse_node_metric(nm({"nodeMetric": {}}), R).has_info  # present, zero usage


def test_columns_align_with_snapshot_nodes() -> None:
    snapshot = snapshot_of(
        [
            make_node("a", {"cpu": 1000}),
            make_node("b", {"cpu": 1000}),
            make_node("c", {"cpu": 1000}),
            nm(
                {
                    "updateTime": "2026-07-24T12:00:00Z",
                    "nodeMetric": {"nodeUsage": res("1", "1Gi")},
                },
                name="c",
            ),
            nm({"nodeMetric": {"nodeUsage": res("2", "2Gi")}}, name="a"),
            nm({}, name="not-a-node"),
        ]
    )
    metrics = NodeMetrics.build(snapshot, R)
    assert metrics.present.tolist() == [True, False, True]
    assert metrics.has_update.tolist() == [False, False, True]
    assert metrics.node_usage.tolist() == [[2000, 0, 1000], [2 * GI, 0, GI]]
    usage, found = metrics.aggregated("p95", 0)
    assert usage.shape == (2, 3) and not found.any()
    now_us = 1_784_894_400 * 10**6 + 180 * 10**6  # 12:03:00
    assert metrics.expired(now_us, 180).tolist() == [True, True, True]
    assert metrics.expired(now_us - 1, 180).tolist() == [True, True, False]


@pytest.mark.parametrize(
    ("status", "where"),
    [
        (
            {"nodeMetric": {"nodeUsage": {"resources": {"cpu": "1q"}}}},
            "status.nodeMetric.nodeUsage.resources.cpu",
        ),
        ({"nodeMetric": {"systemUsage": []}}, "status.nodeMetric.systemUsage"),
        (
            {"podsMetric": [{"podUsage": {"resources": {"memory": "x"}}}]},
            "status.podsMetric[0].podUsage.resources.memory",
        ),
        ({"podsMetric": {}}, "status.podsMetric"),
        ({"updateTime": "yesterday"}, "status.updateTime"),
        (
            {"nodeMetric": {"aggregatedNodeUsages": [{"duration": "5 m"}]}},
            "status.nodeMetric.aggregatedNodeUsages[0].duration",
        ),
    ],
)
def test_malformed_metrics_name_the_field(status: dict[str, Any], where: str) -> None:
    with pytest.raises(ObjectError) as raised:
        parse_node_metric(nm(status, name="node-7"), R)
    assert str(raised.value).startswith(f"NodeMetric node-7: {where}: ")


@given(
    st.integers(0, 10**15),
    st.sampled_from(["", "m", "k", "M", "G", "Ki", "Mi", "Gi", "Ti"]),
    st.sampled_from(["cpu", "memory"]),
)
def test_fast_quantity_path_matches_the_exact_parser(number: int, suffix: str, name: str) -> None:
    text = f"{number}{suffix}"
    assert amount(name, text) == resource_amount(name, text)


def test_quantity_forms() -> None:
    assert amount("cpu", "1.5") == 1500
    assert amount("memory", "1e3") == 1000
    assert amount("cpu", 2) == 2000
    assert amount("memory", None) == 0
    assert np.int64(amount("memory", "8Ei")) == 2**63 - 1  # capped like Quantity
