"""LoadAwareScheduling Filter rules beyond the conformance vectors (load_aware.go ``Filter``)."""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.plugins.loadaware.estimator import go_round
from scoring.plugins.loadaware.filter import exceeds
from tests.scoring.loadaware_vectors import (
    CORES,
    GI,
    metric,
    node,
    pod,
    pod_usage,
    run_plugin,
    scores,
    vector,
    verdicts,
)

CPU = "node(s) cpu usage exceed threshold"
MEMORY = "node(s) memory usage exceed threshold"
EXPIRED = "node(s) nodeMetric expired"
HUNDRED_CORES = {"cpu": 100 * CORES, "memory": 100 * GI}
# A koord-free pod estimates nothing, so the node's own usage decides.
FREE_POD = pod("free", labels={"koordinator.sh/priority-class": "koord-free"})


def one(args: dict[str, Any], m: dict[str, Any] | None, **kwargs: Any) -> str | None:
    """The verdict on a single node (100 cores / 100Gi unless given)."""
    kwargs.setdefault("nodes", [node(allocatable=HUNDRED_CORES)])
    kwargs.setdefault("incoming", FREE_POD)
    v = vector(args, metrics=[m] if m else [], **kwargs)
    return verdicts(v)["test-node-1"]


# -- expiry -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("age", "expected"), [(179, None), (180, EXPIRED), (181, EXPIRED)])
def test_expiry_is_inclusive(age: float, expected: str | None) -> None:
    assert one({}, metric({}, age=age)) == expected


def test_expiry_needs_filter_expired_node_metrics() -> None:
    assert one({"filterExpiredNodeMetrics": False}, metric({}, age=3600)) is None
    # ... and then the usage of the stale metric is checked like any other.
    stale_busy = metric({"cpu": 90 * CORES}, age=3600)
    assert one({"filterExpiredNodeMetrics": False}, stale_busy) == CPU


def test_enable_schedule_when_expired_passes_without_checking_usage() -> None:
    stale_busy = metric({"cpu": 90 * CORES}, age=3600)
    assert one({"enableScheduleWhenNodeMetricsExpired": True}, stale_busy) is None


def test_custom_expiration() -> None:
    assert one({"nodeMetricExpirationSeconds": 30}, metric({}, age=30)) == EXPIRED
    assert one({"nodeMetricExpirationSeconds": 30}, metric({}, age=29)) is None


def test_nil_update_time_is_expired() -> None:
    assert one({}, metric({}, age=None)) == EXPIRED


def test_expired_metric_scores_zero_whatever_the_filter_flags() -> None:
    args = {"filterExpiredNodeMetrics": False, "enableScheduleWhenNodeMetricsExpired": True}
    v = vector(
        args, nodes=[node(allocatable=HUNDRED_CORES)], metrics=[metric({}, age=180)], incoming=pod()
    )
    assert scores(v) == {"test-node-1": 0}
    fresh = vector(
        args, nodes=[node(allocatable=HUNDRED_CORES)], metrics=[metric({}, age=179)], incoming=pod()
    )
    assert scores(fresh) == {"test-node-1": 99}


# -- short-circuits -----------------------------------------------------------------------------


def test_missing_metric_and_nil_node_metric_pass() -> None:
    assert one({}, None) is None
    assert one({}, metric(None)) is None  # status.nodeMetric nil


def test_all_zero_thresholds_pass_before_the_expiry_check() -> None:
    assert one({"usageThresholds": {"cpu": 0, "memory": 0}}, metric({}, age=3600)) is None


def test_daemonset_pods_bypass_even_an_expired_metric() -> None:
    assert (
        one({}, metric({}, age=3600), incoming=pod(owner_kinds=["ReplicaSet", "DaemonSet"])) is None
    )


def test_zero_allocatable_resource_is_skipped() -> None:
    no_memory = node(allocatable={"cpu": 100 * CORES})
    assert one({}, metric({"memory": 10 * GI}), nodes=[no_memory]) is None


# -- the usage percentage ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("used_milli", "expected"),
    [
        (65_000, None),  # exactly 65%: equal passes
        (65_499, None),  # 65.499% rounds to 65
        (65_500, CPU),  # 65.5% rounds half up (away from zero) to 66
        (66_000, CPU),
    ],
)
def test_rounding_and_strict_comparison(used_milli: int, expected: str | None) -> None:
    assert one({}, metric({"cpu": used_milli, "memory": 0})) == expected


def test_division_happens_before_multiplication() -> None:
    """Go computes float64(23) / float64(40) * 100 = 57.49999999999999, which rounds to 57;
    the exact 57.5 (or 23 * 100 / 40) would round to 58 and fail a 57% threshold."""
    tiny = node(allocatable={"cpu": 40, "memory": GI})
    usage = metric({"cpu": 23, "memory": 0})
    assert one({"usageThresholds": {"cpu": 57}}, usage, nodes=[tiny]) is None
    assert one({"usageThresholds": {"cpu": 56}}, usage, nodes=[tiny]) == CPU


def test_first_failing_resource_in_name_order() -> None:
    both = metric({"cpu": 99 * CORES, "memory": 99 * GI})
    assert one({}, both) == CPU
    assert one({"usageThresholds": {"memory": 50, "cpu": 0}}, both) == MEMORY
    gpu_first = node(allocatable={"cpu": 100 * CORES, "memory": 100 * GI, "example.com/acc": 4})
    args = {"usageThresholds": {"cpu": 50, "example.com/acc": 50}}
    m = metric({"cpu": 99 * CORES, "example.com/acc": 4})
    assert one(args, m, nodes=[gpu_first]) == CPU  # "cpu" < "example.com/acc"


def test_incoming_estimate_is_added() -> None:
    m = metric({"cpu": 60 * CORES, "memory": 0})
    assert one({}, m, incoming=pod(requests={"cpu": 6 * CORES})) is None  # 60 + 5.1 -> 65
    assert one({}, m, incoming=pod(requests={"cpu": 7 * CORES})) == CPU  # 60 + 5.95 -> 66
    burstable = pod(requests={"cpu": 1 * CORES}, limits={"cpu": 7 * CORES})
    assert one({}, m, incoming=burstable) == CPU  # the larger of request and limit


def test_raw_allocatable_annotation_is_the_denominator() -> None:
    amplified = node(
        allocatable={"cpu": 200 * CORES, "memory": 100 * GI},
        annotations={"node.koordinator.sh/raw-allocatable": json.dumps({"cpu": "100"})},
    )
    m = metric({"cpu": 80 * CORES, "memory": 0})
    assert one({}, m, nodes=[amplified]) == CPU  # 80/100, not 80/200
    same = node(
        allocatable={"cpu": 200 * CORES, "memory": 100 * GI},
        annotations={"node.koordinator.sh/raw-allocatable": "invalid"},
    )
    assert one({}, m, nodes=[same]) is None


# -- prod and aggregated profiles ----------------------------------------------------------------


def prod_cluster(args: dict[str, Any], **metric_kwargs: Any) -> dict[str, Any]:
    m = metric(
        {"cpu": 90 * CORES, "memory": 90 * GI},
        pods=[pod_usage("prod-1", {"cpu": 40 * CORES, "memory": 10 * GI}, "prod")],
        **metric_kwargs,
    )
    return vector(
        args,
        nodes=[node(allocatable=HUNDRED_CORES)],
        metrics=[m],
        existing=[pod("prod-1", priority=9500, node="test-node-1", scheduled_age=3600)],
        incoming=pod("new", {"cpu": 0}, priority=9500),
    )


def test_prod_pod_uses_prod_usage_not_node_usage() -> None:
    # prod usage: 40 cores reported + 250m for the incoming pod = 40.25% -> 40
    args = {"usageThresholds": {"cpu": 50}, "prodUsageThresholds": {"cpu": 40}}
    assert verdicts(prod_cluster(args)) == {"test-node-1": None}
    args = {"usageThresholds": {"cpu": 50}, "prodUsageThresholds": {"cpu": 39}}
    assert verdicts(prod_cluster(args)) == {"test-node-1": CPU}


def test_prod_usage_include_sys_adds_system_usage() -> None:
    args = {"prodUsageThresholds": {"cpu": 45}, "prodUsageIncludeSys": True}
    assert verdicts(prod_cluster(args, system={"cpu": 10 * CORES})) == {"test-node-1": CPU}
    args["prodUsageIncludeSys"] = False
    assert verdicts(prod_cluster(args, system={"cpu": 10 * CORES})) == {"test-node-1": None}


def test_non_prod_pod_ignores_prod_thresholds() -> None:
    v = prod_cluster({"usageThresholds": {"cpu": 95}, "prodUsageThresholds": {"cpu": 10}})
    v["pod"] = pod("batch", {"cpu": 0}, priority=5500)
    assert verdicts(v) == {"test-node-1": None}  # node usage 90% <= 95


def test_prod_thresholds_all_zero_fall_back_to_usage_thresholds() -> None:
    annotation = {"scheduling.koordinator.sh/usage-thresholds": '{"prodUsageThresholds":{"cpu":0}}'}
    v = prod_cluster({"usageThresholds": {"cpu": 80}, "prodUsageThresholds": {"cpu": 95}})
    v["nodes"] = [node(allocatable=HUNDRED_CORES, annotations=annotation)]
    assert verdicts(v) == {"test-node-1": CPU}  # node usage 90% > 80


AGG = {"usageThresholds": {"cpu": 60}, "usageAggregationType": "p95"}


def agg_metric(windows: dict[int, int | None]) -> dict[str, Any]:
    """NodeUsage 10 cores; a p95 window per duration (seconds) with that many cores."""
    aggregated = [
        {"duration_seconds": d, "usages": {"p95": None if c is None else {"cpu": c * CORES}}}
        for d, c in windows.items()
    ]
    return metric({"cpu": 10 * CORES, "memory": 0}, aggregated=aggregated)


def test_aggregated_longest_window_when_duration_is_zero() -> None:
    m = agg_metric({300: 50, 1800: 70, 600: 40})
    assert one({"aggregated": AGG}, m) == "node(s) cpu aggregated usage exceed threshold"


def test_aggregated_skips_empty_windows() -> None:
    m = agg_metric({300: 50, 1800: None})
    assert one({"aggregated": AGG}, m) is None  # longest non-empty is 5m: 50% <= 60


def test_aggregated_without_windows_falls_back_to_node_usage() -> None:
    busy = metric({"cpu": 70 * CORES, "memory": 0})
    assert one({"aggregated": AGG}, busy) == "node(s) cpu aggregated usage exceed threshold"


def test_aggregated_specific_missing_window_uses_full_estimates() -> None:
    """The base becomes nodeEstimated: reported usage (90 cores) is ignored entirely."""
    args = {"aggregated": {**AGG, "usageAggregatedDuration": "10m"}}
    m = metric(
        {"cpu": 90 * CORES, "memory": 0},
        aggregated=[{"duration_seconds": 300, "usages": {"p95": {"cpu": 95 * CORES}}}],
        pods=[pod_usage("old", {"cpu": 1 * CORES})],
    )
    quiet = {"nodes": [node(allocatable=HUNDRED_CORES)]}
    old = pod(
        "old", {"cpu": 50 * CORES}, {"cpu": 50 * CORES}, node="test-node-1", scheduled_age=3600
    )
    assert verdicts(vector(args, metrics=[m], existing=[old], incoming=pod(), **quiet)) == {
        "test-node-1": None  # 42.5 + 0.25 cores = 43%
    }
    big = pod(
        "old", {"cpu": 80 * CORES}, {"cpu": 80 * CORES}, node="test-node-1", scheduled_age=3600
    )
    assert verdicts(vector(args, metrics=[m], existing=[big], incoming=pod(), **quiet)) == {
        "test-node-1": "node(s) cpu aggregated usage exceed threshold"  # 68% > 60
    }


def test_aggregated_takes_precedence_over_usage_thresholds_for_non_prod() -> None:
    args = {"usageThresholds": {"cpu": 10}, "aggregated": AGG}
    assert one(args, agg_metric({300: 50})) is None  # 50% p95 <= 60, nodeUsage ignored


# -- vectorized verdicts agree with the per-node explanation ---------------------------------------


def random_cluster(seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    nodes, metrics, existing = [], [], []
    annotations = [
        None,
        '{"usageThresholds":{"memory":70}}',
        '{"usageThresholds":{"cpu":55,"memory":80}}',
        '{"prodUsageThresholds":{"cpu":40}}',
        '{"aggregatedUsage":{"usageThresholds":{"cpu":50},"usageAggregationType":"p95"}}',
        '{"aggregatedUsage":{"usageThresholds":{"cpu":50},"usageAggregationType":"p99","usageAggregatedDuration":"10m"}}',
        "garbage",
    ]
    for i in range(60):
        name = f"n{i:02d}"
        cpu, memory = rng.choice([8, 16, 64]) * CORES, rng.choice([16, 64, 256]) * GI
        text = rng.choice(annotations)
        nodes.append(
            node(
                name,
                {"cpu": cpu, "memory": memory},
                {} if text is None else {"scheduling.koordinator.sh/usage-thresholds": text},
            )
        )
        if rng.random() < 0.1:
            continue
        usage = {"cpu": int(cpu * rng.random()), "memory": int(memory * rng.random())}
        windows = (
            [{"duration_seconds": 300, "usages": {"p95": {"cpu": int(cpu * rng.random())}}}]
            if rng.random() < 0.5
            else []
        )
        pods_usage = []
        for j in range(rng.randrange(4)):
            pod_name = f"{name}-p{j}"
            existing.append(
                pod(
                    pod_name,
                    {"cpu": rng.randrange(1, 4000), "memory": rng.randrange(1, 4 * GI)},
                    priority=rng.choice([None, 9500, 5500]),
                    node=name,
                    scheduled_age=rng.choice([None, 30, 600]),
                )
            )
            if rng.random() < 0.6:
                pods_usage.append(
                    pod_usage(pod_name, {"cpu": rng.randrange(1, 3000)}, rng.choice(["prod", None]))
                )
        metrics.append(
            metric(
                usage,
                node=name,
                age=rng.choice([0, 30, 200, None]) if rng.random() < 0.2 else 0,
                pods=pods_usage,
                aggregated=windows,
            )
        )
    incoming = pod("x", {"cpu": rng.randrange(0, 8000)}, priority=rng.choice([None, 9500, 5500]))
    args = {"prodUsageThresholds": {"cpu": 60}, "dominantResourceWeight": rng.choice([0, 5])}
    return vector(args, nodes=nodes, metrics=metrics, existing=existing, incoming=incoming)


def test_vectorized_filter_and_score_agree_with_per_node_explanation() -> None:
    """The explanation recomputes each node on its own, with exact Go rounding: it must agree
    with the vectorized Filter and Score on clusters mixing every profile and fallback."""
    outcomes = set()
    for seed in range(8):
        plugin, cycle, result, raw = run_plugin(random_cluster(seed))
        for i in range(len(cycle.snapshot)):
            detail = plugin.explain(cycle, i)
            status = result.status(i)
            assert detail["filter"]["reason"] == status.message, (seed, i)
            assert detail["score"]["score"] == int(raw[i]), (seed, i)
            outcomes.add(status.message)
        assert np.all((raw >= 0) & (raw <= 100))
    assert {None, EXPIRED, CPU, MEMORY} <= outcomes


@settings(max_examples=500)
@given(
    st.integers(-(2**40), 2**50),
    st.integers(1, 2**50),
    st.integers(-100, 200),
)
def test_threshold_comparison_matches_go_rounding(used: int, total: int, limit: int) -> None:
    """The vectorized ``x >= L + 0.5`` form equals ``int64(math.Round(x)) > L``."""
    ratio = np.array([float(used) / float(total) * 100.0])
    expected = go_round(float(ratio[0])) > limit
    assert bool(exceeds(ratio, np.array([limit + 0.5]))[0]) == expected


@pytest.mark.parametrize(("used", "total"), [(23, 40), (29, 200), (57, 200), (1, 2), (-1, 2)])
def test_threshold_comparison_on_halves(used: int, total: int) -> None:
    ratio = np.array([float(used) / float(total) * 100.0])
    for limit in range(-60, 60):
        assert bool(exceeds(ratio, np.array([limit + 0.5]))[0]) == (go_round(ratio[0]) > limit)


def test_subsets_give_the_same_verdicts_and_scores() -> None:
    """Caches recompute a few nodes with ``filter_nodes`` / ``score`` on a subset."""
    plugin, cycle, result, raw = run_plugin(random_cluster(3))
    for subset in ([5], [0, 7, 3], list(range(0, 60, 2))):
        nodes = np.array(subset, dtype=np.int64)
        partial = plugin.filter_nodes(cycle, nodes)
        assert [partial.status(k) for k in range(len(nodes))] == [result.status(i) for i in subset]
        assert plugin.score(cycle, nodes).tolist() == raw[nodes].tolist()
