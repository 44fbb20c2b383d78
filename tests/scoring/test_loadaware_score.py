"""LoadAwareScheduling Score beyond the vectors (load_aware.go ``loadAwareSchedulingScorer``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.plugins.loadaware.score import combine, least_used
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
)

NODE = {"cpu": 100 * CORES, "memory": 100 * GI}
FREE = pod("free", labels={"koordinator.sh/priority-class": "koord-free"})  # estimates nothing


def score(
    args: dict[str, Any], usage: dict[str, int], incoming: dict[str, Any] = FREE, **kw: Any
) -> int:
    kw.setdefault("nodes", [node(allocatable=NODE)])
    v = vector(args, metrics=[metric(usage, **kw.pop("metric", {}))], incoming=incoming, **kw)
    return scores(v)["test-node-1"]


def test_least_used_average() -> None:
    # cpu (100 - 30.3) * 100 // 100 = 69; memory (100 - 10.5) -> 89; (69 + 89) // 2 = 79
    usage = {"cpu": 30_300, "memory": int(10.5 * GI)}
    assert score({}, usage) == 79


def test_resource_weights() -> None:
    usage = {"cpu": 80 * CORES, "memory": 0}  # cpu 20, memory 100
    assert score({"resourceWeights": {"cpu": 3, "memory": 1}}, usage) == (20 * 3 + 100) // 4


def test_dominant_weight_alone_scores_the_most_used_resource() -> None:
    """Defaulting leaves resourceWeights empty when dominantResourceWeight is set."""
    usage = {"cpu": 80 * CORES, "memory": 30 * GI}
    assert score({"dominantResourceWeight": 7}, usage) == 20


def test_dominant_weight_with_resource_weights() -> None:
    usage = {"cpu": 80 * CORES, "memory": 30 * GI}  # cpu 20, memory 70
    args = {"dominantResourceWeight": 2, "resourceWeights": {"cpu": 1, "memory": 1}}
    assert score(args, usage) == (20 + 70 + 2 * 20) // 4


def test_dominant_minimum_includes_unweighted_resources() -> None:
    """``memory`` has no weight but is in the vector (scaling factors): it is the dominant one."""
    usage = {"cpu": 10 * CORES, "memory": 90 * GI}  # cpu 90, memory 10
    args = {"dominantResourceWeight": 1, "resourceWeights": {"cpu": 1}}
    assert score(args, usage) == (90 + 10) // 2


def test_overcommitted_resource_scores_zero() -> None:
    usage = {"cpu": 120 * CORES, "memory": 0}
    assert score({}, usage) == (0 + 100) // 2


def test_score_according_prod_usage_only_for_prod_pods() -> None:
    m = {"pods": [pod_usage("prod-1", {"cpu": 10 * CORES, "memory": GI}, "prod")]}
    existing = [pod("prod-1", priority=9500, node="test-node-1", scheduled_age=3600)]
    usage = {"cpu": 90 * CORES, "memory": 90 * GI}
    prod = pod("new", priority=9500, labels={"koordinator.sh/priority-class": "koord-prod"})
    args = {"scoreAccordingProdUsage": True}
    # prod usage 10 cores + 250m, 1Gi + 200Mi: cpu 89, memory 98 -> 93
    assert score(args, usage, prod, metric=m, existing=existing) == 93
    # a batch pod is scored on node usage: cpu 10 - 0.25 -> 9, memory 10 - 0.2 -> 9
    batch = pod("batch", priority=5500)
    assert score(args, usage, batch, metric=m, existing=existing) == 9


def test_score_aggregation_longest_window_and_fallback() -> None:
    args = {"aggregated": {"scoreAggregationType": "p99"}}
    windows = [
        {"duration_seconds": 300, "usages": {"p99": {"cpu": 50 * CORES, "memory": 50 * GI}}},
        {"duration_seconds": 1800, "usages": {"p99": {"cpu": 70 * CORES, "memory": 70 * GI}}},
    ]
    usage = {"cpu": 10 * CORES, "memory": 10 * GI}
    assert score(args, usage, metric={"aggregated": windows}) == 30
    assert score(args, usage) == 90  # no window: nodeUsage


def test_nil_node_metric_scores_zero() -> None:
    v = vector({}, nodes=[node(allocatable=NODE)], metrics=[metric(None)], incoming=FREE)
    assert scores(v) == {"test-node-1": 0}


def test_only_feasible_nodes_are_scored_in_order() -> None:
    nodes = [node(name, NODE) for name in ("a", "b", "c")]
    metrics = [
        metric({"cpu": c * CORES, "memory": 0}, node=n)
        for n, c in zip("abc", (10, 50, 30), strict=True)
    ]
    plugin, cycle, _, _ = run_plugin(vector({}, nodes=nodes, metrics=metrics, incoming=FREE))
    feasible = np.array([2, 0], dtype=np.int64)
    assert plugin.score(cycle, feasible).tolist() == [(70 + 100) // 2, (90 + 100) // 2]


@settings(max_examples=200)
@given(
    st.lists(st.integers(0, 2**40), min_size=3, max_size=3),
    st.lists(st.integers(1, 2**40), min_size=3, max_size=3),
    st.lists(st.integers(0, 100), min_size=3, max_size=3),
    st.integers(0, 100),
)
def test_scorer_matches_the_go_formula(
    used: list[int], capacity: list[int], weights: list[int], dominant: int
) -> None:
    per = least_used(np.array(used, np.int64)[:, None], np.array(capacity, np.int64)[:, None])
    got = int(combine(per, np.array(weights, np.int64), dominant)[0])
    expected_per = [0 if u > c else (c - u) * 100 // c for u, c in zip(used, capacity, strict=True)]
    assert per[:, 0].tolist() == expected_per
    node_score = sum(s * w for s, w in zip(expected_per, weights, strict=True))
    weight_sum = sum(weights) + dominant
    if dominant:
        node_score += min([100, *expected_per]) * dominant
    assert got == (node_score // weight_sum if weight_sum > 0 else 0)
