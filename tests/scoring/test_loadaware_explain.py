"""What LoadAwareScheduling explains per node: sources, breakdown, summary, metric freshness."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
    run_plugin,
    vector,
)

NODE = {"cpu": 100 * CORES, "memory": 100 * GI}
KEY = "scheduling.koordinator.sh/usage-thresholds"


def explain(v: dict[str, Any], node_name: str = "test-node-1") -> dict[str, Any]:
    plugin, cycle, _, _ = run_plugin(v)
    detail: dict[str, Any] = dict(plugin.explain(cycle, cycle.snapshot.index[node_name]))
    json.dumps(detail)  # must be JSON-able
    return detail


def busy_node_with_recent_pod(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """58 cores measured, a pod scheduled 10 s ago estimating 17 cores (5 reported), and an
    incoming pod estimating 3.4 cores: 58 + 12 + 3.4 = 73.4 -> 73%."""
    return vector(
        {},
        nodes=[node(allocatable=NODE, annotations=annotations)],
        metrics=[
            metric(
                {"cpu": 58 * CORES, "memory": 10 * GI},
                age=20,
                pods=[pod_usage("recent", {"cpu": 5 * CORES})],
            )
        ],
        existing=[pod("recent", {"cpu": 20 * CORES}, node="test-node-1", scheduled_age=10)],
        incoming=pod("new", {"cpu": 4 * CORES}),
    )


def test_summary_names_measured_estimated_and_threshold_source() -> None:
    detail = explain(busy_node_with_recent_pod({KEY: '{"usageThresholds":{"cpu":65}}'}))
    assert detail["summary"] == (
        "cpu 73% (58% measured + 15% estimated) > 65% threshold from node annotation"
    )
    cpu = detail["filter"]["resources"]["cpu"]
    assert cpu == {
        "allocatable": 100 * CORES,
        "measured": 58 * CORES,
        "existingPodsEstimated": 12 * CORES,
        "incomingEstimated": 3400,
        "estimated": 73_400,
        "usagePercent": 73,
        "measuredPercent": 58,
        "threshold": 65,
        "checked": True,
        "exceeds": True,
    }
    assert detail["filter"]["reason"] == "node(s) cpu usage exceed threshold"
    assert detail["filter"]["thresholds"]["source"] == "node annotation"
    assert detail["filter"]["thresholds"]["thresholds"] == {"cpu": 65, "memory": 0}


def test_passing_node_summarises_the_limiting_resource() -> None:
    detail = explain(busy_node_with_recent_pod({KEY: '{"usageThresholds":{"cpu":90,"memory":12}}'}))
    assert detail["filter"]["passed"] is True
    # memory: 10Gi + 2 x 200Mi defaults = 10.4% -> 10, closer to 12% than cpu 73% to 90%.
    assert (
        detail["summary"]
        == "memory 10% (10% measured + 0% estimated) <= 12% threshold from node annotation"
    )


def test_estimated_pods_are_listed_with_the_reason() -> None:
    detail = explain(busy_node_with_recent_pod())
    assert detail["estimatedPods"]["count"] == 1
    entry = detail["estimatedPods"]["pods"][0]
    assert entry["pod"] == "default/recent"
    assert entry["reason"] == "scheduled within the report interval"
    assert entry["nodeDelta"]["cpu"] == 12 * CORES
    assert entry["reportedUsage"] == {"cpu": 5 * CORES, "memory": 0}


def test_node_metric_age_and_expiry() -> None:
    detail = explain(busy_node_with_recent_pod())
    assert detail["nodeMetric"] == {
        "present": True,
        "updateTime": "2026-07-24T11:59:40Z",
        "ageSeconds": 20.0,
        "expirationSeconds": 180,
        "expired": False,
        "reportIntervalSeconds": 60.0,
        "hasUsage": True,
    }
    stale = vector(
        {}, nodes=[node(allocatable=NODE)], metrics=[metric({}, age=600)], incoming=pod()
    )
    detail = explain(stale)
    assert detail["nodeMetric"]["expired"] is True
    assert detail["filter"]["reason"] == "node(s) nodeMetric expired"
    assert detail["score"]["why"] == "NodeMetric expired"


def test_filter_effectively_off() -> None:
    v = vector(
        {"usageThresholds": {"cpu": 0, "memory": 0}},
        nodes=[node(allocatable=NODE)],
        metrics=[metric({})],
        incoming=pod(),
    )
    assert explain(v)["filter"]["why"] == "filter effectively off: every threshold is 0"


def test_missing_metric_and_daemonset() -> None:
    missing = vector({}, nodes=[node(allocatable=NODE)], incoming=pod())
    assert explain(missing)["filter"]["why"] == "no NodeMetric: the node is not load-aware"
    assert explain(missing)["nodeMetric"] == {"present": False}
    ds = vector(
        {},
        nodes=[node(allocatable=NODE)],
        metrics=[metric({})],
        incoming=pod(owner_kinds=["DaemonSet"]),
    )
    assert explain(ds)["filter"]["why"] == "DaemonSet pods bypass the load filter"


def test_aggregated_sources() -> None:
    args = {
        "aggregated": {
            "usageThresholds": {"cpu": 60},
            "usageAggregationType": "p95",
            "usageAggregatedDuration": "5m",
        }
    }
    window = {"duration_seconds": 300, "usages": {"p95": {"cpu": 70 * CORES}}}
    found = vector(
        args,
        nodes=[node(allocatable=NODE)],
        metrics=[metric({"cpu": 10 * CORES}, aggregated=[window])],
        incoming=pod(),
    )
    detail = explain(found)["filter"]
    assert detail["usageSource"] == "p95 over 5m0s"
    assert detail["thresholds"]["profile"] == "aggregated"
    assert detail["thresholds"]["aggregatedDuration"] == "5m0s"
    assert detail["summary"].startswith(
        "cpu (p95 over 5m0s) 70% (70% measured + 0% estimated) > 60%"
    )
    missing = vector(
        args, nodes=[node(allocatable=NODE)], metrics=[metric({"cpu": 10 * CORES})], incoming=pod()
    )
    assert explain(missing)["filter"]["usageSource"] == (
        "estimates of existing pods (no p95 over 5m0s reported)"
    )


def test_invalid_annotation_is_reported() -> None:
    detail = explain(busy_node_with_recent_pod({KEY: "{oops"}))
    assert detail["filter"]["thresholds"]["source"] == "args"
    assert "annotationIgnored" in detail["filter"]["thresholds"]


def test_raw_allocatable_source() -> None:
    annotations = {"node.koordinator.sh/raw-allocatable": '{"cpu": "50"}'}
    detail = explain(busy_node_with_recent_pod(annotations))
    assert detail["allocatableSource"] == "node.koordinator.sh/raw-allocatable annotation"
    assert detail["filter"]["resources"]["cpu"]["allocatable"] == 50 * CORES


def test_score_breakdown() -> None:
    detail = explain(busy_node_with_recent_pod())["score"]
    assert detail["usageSource"] == "nodeUsage"
    assert detail["resources"]["cpu"] == {
        "used": 73_400,
        "allocatable": 100 * CORES,
        "score": 26,
        "weight": 1,
    }
    assert detail["score"] == (26 + 89) // 2


def test_explanation_through_the_cli(tmp_path: Path) -> None:
    v = busy_node_with_recent_pod({KEY: '{"usageThresholds":{"cpu":65}}'})
    cfg = config(v["args"], filter_plugin=True, score_plugin=True)
    decision = evaluate(tmp_path, cluster_objects(v), incoming_pod(v), config=cfg, now=NOW)
    entry = node_result(decision, "test-node-1")
    details = entry["details"][PLUGIN]
    assert details["filter"]["evaluated"] is True
    assert details["summary"].endswith("> 65% threshold from node annotation")
    assert next(f for f in entry["filters"] if f["plugin"] == PLUGIN)["reason"] == (
        "node(s) cpu usage exceed threshold"
    )
