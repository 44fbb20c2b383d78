"""Koordinator's own LoadAware test cases that the shared vectors do not include.

Transcribed from pkg/scheduler/plugins/loadaware/load_aware_test.go (TestFilterExpiredNodeMetric,
TestEnableScheduleWhenNodeMetricsExpired, TestFilterUsage, TestScore) at commit a7a1b76. Every
node has 96 cores / 512Gi; the expected verdicts and scores are the Go tests' ``wantStatus`` and
``wantScore``. Each case runs in process and through ``python -m scoring evaluate``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.scoring.builders import evaluate, node_result
from tests.scoring.loadaware_vectors import (
    CORES,
    GI,
    NOW,
    PLUGIN,
    cluster_objects,
    config,
    incoming_pod,
    metric,
    node,
    pod,
    pod_usage,
    scores,
    vector,
    verdicts,
)

EXPIRED = "node(s) nodeMetric expired"
CPU = "node(s) cpu usage exceed threshold"
MEMORY = "node(s) memory usage exceed threshold"
CPU_AGG = "node(s) cpu aggregated usage exceed threshold"
FILTER_ARGS = {"filterExpiredNodeMetrics": False}
GUARANTEED_16 = {"cpu": 16 * CORES, "memory": 32 * GI}
P95_5M = {"duration_seconds": 300, "usages": {"p95": {"cpu": 70 * CORES, "memory": 256 * GI}}}
PROD_PODS_BOUND = [
    pod("prod-pod-1", priority=9999, node="test-node-1", scheduled_age=10),
    pod("prod-pod-2", priority=9999, node="test-node-1", scheduled_age=10),
]


def _prod_usage(cpu1: int, mem1: int, cpu2: int, mem2: int) -> list[dict[str, Any]]:
    return [
        pod_usage("prod-pod-1", {"cpu": cpu1 * CORES, "memory": mem1 * GI}, "prod"),
        pod_usage("prod-pod-2", {"cpu": cpu2 * CORES, "memory": mem2 * GI}, "prod"),
    ]


FILTER_CASES: dict[str, tuple[dict[str, Any], str | None]] = {
    # TestFilterExpiredNodeMetric (default args; the node has no allocatable).
    "expired/healthy": (vector(nodes=[node(allocatable={})], metrics=[metric(None)]), None),
    "expired/nil-updateTime": (
        vector(nodes=[node(allocatable={})], metrics=[metric(None, age=None)]),
        EXPIRED,
    ),
    # TestEnableScheduleWhenNodeMetricsExpired.
    "enable/expired": (
        vector(
            {"enableScheduleWhenNodeMetricsExpired": True},
            nodes=[node(allocatable={})],
            metrics=[metric(None, age=180)],
        ),
        None,
    ),
    "disable/nil-updateTime": (
        vector(
            {"enableScheduleWhenNodeMetricsExpired": False},
            nodes=[node(allocatable={})],
            metrics=[metric(None, age=None)],
        ),
        EXPIRED,
    ),
    # TestFilterUsage.
    "normal usage": (
        vector(FILTER_ARGS, metrics=[metric({"cpu": 60 * CORES, "memory": 256 * GI})]),
        None,
    ),
    "missing NodeMetric": (vector(FILTER_ARGS), None),
    "exceed cpu usage": (
        vector(FILTER_ARGS, metrics=[metric({"cpu": 70 * CORES, "memory": 256 * GI})]),
        CPU,
    ),
    "exceed p95 cpu usage": (
        vector(
            {
                **FILTER_ARGS,
                "aggregated": {
                    "usageThresholds": {"cpu": 60},
                    "usageAggregationType": "p95",
                    "usageAggregatedDuration": "5m0s",
                },
            },
            metrics=[metric({"cpu": 30 * CORES, "memory": 100 * GI}, aggregated=[P95_5M])],
        ),
        CPU_AGG,
    ),
    "exceed memory usage": (
        vector(FILTER_ARGS, metrics=[metric({"cpu": 30 * CORES, "memory": 500 * GI})]),
        MEMORY,
    ),
    "exceed p95 cpu usage by custom usage": (
        vector(
            FILTER_ARGS,
            nodes=[
                node(
                    annotations={
                        "scheduling.koordinator.sh/usage-thresholds": json.dumps(
                            {
                                "aggregatedUsage": {
                                    "usageThresholds": {"cpu": 60},
                                    "usageAggregationType": "p95",
                                    "usageAggregatedDuration": "5m0s",
                                }
                            }
                        )
                    }
                )
            ],
            metrics=[metric({"cpu": 30 * CORES, "memory": 100 * GI}, aggregated=[P95_5M])],
        ),
        CPU_AGG,
    ),
    "disable filter exceed memory usage": (
        vector(
            {**FILTER_ARGS, "usageThresholds": {"memory": 0}},
            metrics=[metric({"cpu": 30 * CORES, "memory": 500 * GI})],
        ),
        None,
    ),
    "prod usage filter is not enabled by default": (
        vector(
            {**FILTER_ARGS, "usageThresholds": {"cpu": 100, "memory": 100}},
            metrics=[
                metric({"cpu": 63 * CORES, "memory": 500 * GI}, pods=_prod_usage(30, 200, 33, 300))
            ],
            existing=PROD_PODS_BOUND,
        ),
        None,
    ),
    "filter prod memory usage": (
        vector(
            {
                **FILTER_ARGS,
                "usageThresholds": {"cpu": 100, "memory": 100},
                "prodUsageThresholds": {"cpu": 100, "memory": 50},
            },
            metrics=[
                metric({"cpu": 63 * CORES, "memory": 500 * GI}, pods=_prod_usage(30, 200, 33, 300))
            ],
            existing=PROD_PODS_BOUND,
            incoming=pod("prod-pod-3", priority=9999),
        ),
        MEMORY,
    ),
    "filter prod memory usage with custom usage configuration": (
        vector(
            {
                **FILTER_ARGS,
                "usageThresholds": {"cpu": 100, "memory": 100},
                "prodUsageThresholds": {"cpu": 100, "memory": 100},
            },
            nodes=[
                node(
                    annotations={
                        "scheduling.koordinator.sh/usage-thresholds": json.dumps(
                            {"prodUsageThresholds": {"cpu": 100, "memory": 50}}
                        )
                    }
                )
            ],
            metrics=[
                metric({"cpu": 63 * CORES, "memory": 500 * GI}, pods=_prod_usage(30, 200, 33, 300))
            ],
            existing=PROD_PODS_BOUND,
            incoming=pod("prod-pod-3", priority=9999),
        ),
        MEMORY,
    ),
    "filter prod cpu usage with new pod request configuration": (
        vector(
            {
                **FILTER_ARGS,
                "usageThresholds": {"cpu": 65, "memory": 100},
                "prodUsageThresholds": {"cpu": 60, "memory": 100},
            },
            metrics=[
                metric({"cpu": 53 * CORES, "memory": 500 * GI}, pods=_prod_usage(30, 100, 23, 200))
            ],
            existing=PROD_PODS_BOUND,
            incoming=pod("prod-pod-3", {"cpu": 20 * CORES, "memory": 100 * GI}, priority=9999),
        ),
        CPU,
    ),
    "filter mid cpu usage with new pod request configuration": (
        vector(
            {
                **FILTER_ARGS,
                "usageThresholds": {"cpu": 65, "memory": 100},
                "prodUsageThresholds": {"cpu": 60, "memory": 100},
            },
            metrics=[
                metric(
                    {"cpu": 53 * CORES, "memory": 300 * GI},
                    pods=[
                        pod_usage("prod-pod-1", {"cpu": 30 * CORES, "memory": 100 * GI}, "prod"),
                        pod_usage("prod-pod-2", {"cpu": 23 * CORES, "memory": 200 * GI}),
                    ],
                )
            ],
            existing=PROD_PODS_BOUND,
            incoming=pod(
                "prod-pod-3",
                {"kubernetes.io/mid-cpu": 12000, "kubernetes.io/mid-memory": 100 * GI},
                priority=7999,
            ),
        ),
        CPU,
    ),
    "filter mid cpu usage with assignedCache pod": (
        vector(
            {
                **FILTER_ARGS,
                "usageThresholds": {"cpu": 65, "memory": 85},
                "prodUsageThresholds": {"cpu": 60, "memory": 70},
            },
            metrics=[
                metric(
                    {"cpu": 33 * CORES, "memory": 110 * GI},
                    pods=[pod_usage("prod-pod-1", {"cpu": 30 * CORES, "memory": 100 * GI}, "prod")],
                )
            ],
            existing=[
                pod("prod-pod-1", priority=9999, node="test-node-1", scheduled_age=10),
                pod(
                    "mid-pod-2",
                    {"kubernetes.io/mid-cpu": 20000, "kubernetes.io/mid-memory": 200 * GI},
                    priority=7999,
                    node="test-node-1",
                    scheduled_age=10,
                ),
            ],
            incoming=pod(
                "mid-pod-3",
                {"kubernetes.io/mid-cpu": 20000, "kubernetes.io/mid-memory": 200 * GI},
                priority=7999,
            ),
        ),
        CPU,
    ),
}

_SCORE = {"scoreAccordingProdUsage": False}
_EMPTY_USAGE = metric({})
SCORE_CASES: dict[str, tuple[dict[str, Any], int]] = {
    "score node with expired nodeMetric": (
        vector(_SCORE, metrics=[metric({}, age=180)], incoming=pod("test-pod-1", GUARANTEED_16)),
        0,
    ),
    "score empty node": (
        vector(
            _SCORE, metrics=[_EMPTY_USAGE], incoming=pod("test-pod-1", GUARANTEED_16, GUARANTEED_16)
        ),
        90,
    ),
    "score node missing NodeMetrics": (
        vector(_SCORE, incoming=pod("test-pod-1", GUARANTEED_16, GUARANTEED_16)),
        0,
    ),
    "score load node with p95": (
        vector(
            {
                **_SCORE,
                "aggregated": {"scoreAggregationType": "p95", "scoreAggregatedDuration": "5m0s"},
            },
            metrics=[
                metric(
                    {"cpu": 0, "memory": 0},
                    aggregated=[
                        {
                            "duration_seconds": 300,
                            "usages": {
                                "p95": {"cpu": 32 * CORES, "memory": 10 * GI},
                                "p99": {"cpu": 50 * CORES, "memory": 70 * GI},
                            },
                        }
                    ],
                )
            ],
            incoming=pod("test-pod-1", GUARANTEED_16, GUARANTEED_16),
        ),
        72,
    ),
    "score load node with p95 but have not reported usage": (
        vector(
            {
                **_SCORE,
                "aggregated": {"scoreAggregationType": "p95", "scoreAggregatedDuration": "5m0s"},
            },
            metrics=[metric({"cpu": 0, "memory": 0})],
            incoming=pod("test-pod-1", GUARANTEED_16, GUARANTEED_16),
        ),
        90,
    ),
    "score load node with just assigned pod": (
        vector(
            _SCORE,
            metrics=[metric({"cpu": 32 * CORES, "memory": 10 * GI})],
            existing=[pod("assigned-pod-1", GUARANTEED_16, GUARANTEED_16, node="test-node-1")],
            incoming=pod("test-pod-1", GUARANTEED_16, GUARANTEED_16),
        ),
        63,
    ),
    "score load node with just assigned pod where after updateTime": (
        vector(
            _SCORE,
            metrics=[metric({"cpu": 32 * CORES, "memory": 10 * GI}, age=10)],
            existing=[pod("assigned-pod-1", GUARANTEED_16, GUARANTEED_16, node="test-node-1")],
            incoming=pod("test-pod-1", GUARANTEED_16, GUARANTEED_16),
        ),
        63,
    ),
    "score request less than limit": (
        vector(
            _SCORE,
            metrics=[_EMPTY_USAGE],
            incoming=pod("test-pod-1", {"cpu": 8 * CORES, "memory": 16 * GI}, GUARANTEED_16),
        ),
        90,
    ),
    "score with drf": (
        vector(
            {**_SCORE, "dominantResourceWeight": 10},
            metrics=[_EMPTY_USAGE],
            incoming=pod("test-pod-1", GUARANTEED_16, GUARANTEED_16),
        ),
        85,
    ),
    "score empty pod": (
        vector(_SCORE, metrics=[_EMPTY_USAGE], incoming=pod("test-pod-1")),
        99,
    ),
}


@pytest.mark.parametrize("name", list(FILTER_CASES))
def test_filter_case(name: str) -> None:
    case, reason = FILTER_CASES[name]
    assert verdicts(case) == {"test-node-1": reason}


@pytest.mark.parametrize("name", list(SCORE_CASES))
def test_score_case(name: str) -> None:
    case, expected = SCORE_CASES[name]
    assert scores(case) == {"test-node-1": expected}


@pytest.mark.parametrize("name", list(FILTER_CASES))
def test_filter_case_through_cli(tmp_path: Path, name: str) -> None:
    case, reason = FILTER_CASES[name]
    cfg = config(case["args"], filter_plugin=True, score_plugin=False)
    decision = evaluate(tmp_path, cluster_objects(case), incoming_pod(case), config=cfg, now=NOW)
    entry = node_result(decision, "test-node-1")
    status = next(f for f in entry["filters"] if f["plugin"] == PLUGIN)
    assert status["reason"] == reason
    assert status["code"] == ("Success" if reason is None else "Unschedulable")


@pytest.mark.parametrize("name", list(SCORE_CASES))
def test_score_case_through_cli(tmp_path: Path, name: str) -> None:
    case, expected = SCORE_CASES[name]
    cfg = config(case["args"], filter_plugin=False, score_plugin=True)
    decision = evaluate(tmp_path, cluster_objects(case), incoming_pod(case), config=cfg, now=NOW)
    score = next(s for s in node_result(decision, "test-node-1")["scores"] if s["plugin"] == PLUGIN)
    assert score["raw"] == expected
