"""Pod estimation, node allocatable and koord priority classes.

Expected estimates come from estimator/default_estimator_test.go (Koordinator); priority classes
from apis/extension/priority*.go and qos_utils.go.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.objects import parse_node, parse_pod
from scoring.plugins.loadaware.estimator import (
    Estimator,
    go_round,
    node_allocatable,
    requested_resource,
)
from scoring.plugins.loadaware.priority import BATCH, FREE, MID, PROD, priority_class
from tests.scoring.builders import make_container, make_node, make_pod

GI = 1 << 30
DEFAULT_FACTORS = {"cpu": 85, "memory": 70}


def pod(
    requests: dict[str, Any] | None = None,
    limits: dict[str, Any] | None = None,
    *,
    priority: int | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    init: list[dict[str, Any]] | None = None,
) -> Any:
    containers = [make_container("c", requests, limits)] if requests or limits else []
    spec = {} if priority is None else {"priority": priority}
    return parse_pod(
        make_pod(
            "p",
            containers=containers,
            init_containers=init or [],
            labels=labels,
            annotations=annotations,
            spec=spec,
        )
    )


def estimate(
    p: Any, factors: dict[str, int] | None = None, customize: bool = False
) -> dict[str, int]:
    return Estimator(factors or DEFAULT_FACTORS, customize).estimate_pod(p)


# -- upstream estimator tests ------------------------------------------------------------------


def test_empty_pod_gets_the_default_request() -> None:
    assert estimate(pod()) == {"cpu": 250, "memory": 200 * 1024 * 1024}


def test_guaranteed_pod() -> None:
    p = pod({"cpu": "4", "memory": "8Gi"}, {"cpu": "4", "memory": "8Gi"})
    assert estimate(p) == {"cpu": 3400, "memory": 6012954214}


def test_burstable_pod_uses_the_larger_limit() -> None:
    p = pod({"cpu": "4", "memory": "8Gi"}, {"cpu": "8", "memory": "8Gi"})
    assert estimate(p) == {"cpu": 6800, "memory": 6012954214}


def test_zoomed_factors_are_capped_at_the_limit() -> None:
    p = pod({"cpu": "4", "memory": "8Gi"}, {"cpu": "4", "memory": "8Gi"})
    assert estimate(p, {"cpu": 110, "memory": 70}) == {"cpu": 4000, "memory": 6012954214}
    assert estimate(p, {"cpu": 85, "memory": 110}) == {"cpu": 3400, "memory": 8589934592}


def test_batch_pod_reads_batch_resources_as_milli_values() -> None:
    p = pod(
        {"kubernetes.io/batch-cpu": "4000", "kubernetes.io/batch-memory": "8Gi"},
        {"kubernetes.io/batch-cpu": "4000", "kubernetes.io/batch-memory": "8Gi"},
        priority=5000,
        labels={"koordinator.sh/qosClass": "BE"},
    )
    assert estimate(p) == {"cpu": 3400, "memory": 6012954214}


def test_pod_with_only_requests() -> None:
    p = pod({"cpu": "4", "memory": "8Gi"}, priority=9999, labels={"koordinator.sh/qosClass": "LS"})
    assert estimate(p, {"cpu": 80, "memory": 80}) == {"cpu": 3200, "memory": 6871947674}


def test_customized_factors_need_allow_customize() -> None:
    p = pod(
        {"cpu": "4", "memory": "8Gi"},
        priority=9999,
        annotations={"scheduling.koordinator.sh/load-estimated-scaling-factors": '{"cpu":100}'},
    )
    factors = {"cpu": 80, "memory": 80}
    assert estimate(p, factors, customize=True) == {"cpu": 4000, "memory": 6871947674}
    assert estimate(p, factors, customize=False) == {"cpu": 3200, "memory": 6871947674}


@pytest.mark.parametrize(
    "annotation", ["not json", "[1]", '{"cpu": 1.5}', '{"cpu": "100"}', "{}", "null"]
)
def test_unusable_custom_factors_fall_back_to_the_args(annotation: str) -> None:
    p = pod(
        {"cpu": "4"},
        annotations={"scheduling.koordinator.sh/load-estimated-scaling-factors": annotation},
    )
    assert estimate(p, customize=True)["cpu"] == 3400


# -- further rules ------------------------------------------------------------------


def test_mid_pod_estimates_mid_resources_without_default() -> None:
    mid = pod({"kubernetes.io/mid-cpu": "12k", "kubernetes.io/mid-memory": "100Gi"}, priority=7999)
    assert estimate(mid) == {"cpu": 10200, "memory": round(100 * GI * 0.7)}
    # No mid request: 0, not the 250m / 200Mi default that cpu and batch-cpu get.
    assert estimate(pod(priority=7000)) == {"cpu": 0, "memory": 0}


def test_free_pod_estimates_nothing() -> None:
    p = pod({"cpu": "4", "memory": "8Gi"}, labels={"koordinator.sh/priority-class": "koord-free"})
    assert estimate(p) == {"cpu": 0, "memory": 0}


def test_batch_pod_without_batch_resources_gets_the_default() -> None:
    p = pod({"cpu": "4"}, priority=5500)
    assert estimate(p) == {"cpu": 250, "memory": 200 * 1024 * 1024}


def test_other_resources_have_no_default_and_no_translation() -> None:
    p = pod({"cpu": "1", "nvidia.com/gpu": "2"}, {"nvidia.com/gpu": "2"})
    assert estimate(p, {"cpu": 85, "memory": 70, "nvidia.com/gpu": 50}) == {
        "cpu": 850,
        "memory": 200 * 1024 * 1024,
        "nvidia.com/gpu": 1,
    }
    assert requested_resource(BATCH, "nvidia.com/gpu") == ""


def test_requests_include_init_containers_and_cap_at_the_limit() -> None:
    """PodRequests takes the init-container peak; the estimate is then capped at PodLimits."""
    init = [make_container("init", {"cpu": "4"})]
    p = pod({"cpu": "1"}, {"cpu": "1"}, init=init)
    assert estimate(p)["cpu"] == 1000


def test_estimate_rounds_half_away_from_zero() -> None:
    # 5m * 50% = 2.5m: Go's math.Round gives 3m where Python's round() would give 2m.
    assert estimate(pod({"cpu": "5m"}, {"cpu": "5m"}), {"cpu": 50, "memory": 70})["cpu"] == 3


@pytest.mark.parametrize(
    ("x", "rounded"),
    [(0.5, 1.0), (1.5, 2.0), (2.5, 3.0), (-0.5, -1.0), (-2.5, -3.0), (0.49999999999999994, 0.0)],
)
def test_go_round(x: float, rounded: float) -> None:
    assert go_round(x) == rounded


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_go_round_halves(n: int) -> None:
    half = n + 0.5
    assert go_round(half) == (n + 1 if half > 0 else n)


# -- node allocatable ------------------------------------------------------------------


def node_with(annotation: str | None, allocatable: dict[str, Any]) -> Any:
    annotations = {} if annotation is None else {"node.koordinator.sh/raw-allocatable": annotation}
    return parse_node(make_node("n", allocatable, annotations=annotations))


def test_raw_allocatable_overrides_allocatable() -> None:
    node = node_with('{"cpu":28,"memory":"32Gi"}', {"cpu": "32", "memory": "42Gi", "pods": "110"})
    assert node_allocatable(node) == {"cpu": 28000, "memory": 32 * GI, "pods": 110}


@pytest.mark.parametrize("annotation", [None, "{}", "null", "not json", '{"cpu":"x"}', "[]"])
def test_unusable_raw_allocatable_is_ignored(annotation: str | None) -> None:
    assert node_allocatable(node_with(annotation, {"cpu": "32"})) is None


def test_raw_allocatable_numbers_are_parsed_as_quantities() -> None:
    assert node_allocatable(node_with('{"cpu": 1.5, "memory": 1e3}', {})) == {
        "cpu": 1500,
        "memory": 1000,
    }


# -- priority classes ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"priority": 9000}, PROD),
        ({"priority": 9999}, PROD),
        ({"priority": 7500}, MID),
        ({"priority": 5000}, BATCH),
        ({"priority": 3999}, FREE),
        ({"labels": {"koordinator.sh/priority-class": "koord-mid"}, "priority": 9500}, MID),
        # A label with an unknown value decides "none"; the priority is not consulted.
        ({"labels": {"koordinator.sh/priority-class": "gold"}, "priority": 5500}, BATCH),
        ({"labels": {"koordinator.sh/qosClass": "LSR"}}, PROD),
        ({"labels": {"koordinator.sh/qosClass": "BE"}, "requests": {"cpu": "1"}}, BATCH),
        ({"requests": {"cpu": "1"}}, PROD),  # Burstable
        ({"requests": {"cpu": "1"}, "limits": {"cpu": "1", "memory": "1Gi"}}, PROD),
        ({}, BATCH),  # BestEffort
        ({"priority": 100, "requests": {"cpu": "1"}}, PROD),
    ],
)
def test_priority_class(kwargs: dict[str, Any], expected: str) -> None:
    assert priority_class(pod(**kwargs)) == expected


def test_unknown_label_with_guaranteed_pod_is_prod_not_none() -> None:
    p = pod(
        {"cpu": "1", "memory": "1Gi"},
        {"cpu": "1", "memory": "1Gi"},
        labels={"koordinator.sh/priority-class": ""},
        priority=5000,
    )
    assert priority_class(p) == PROD
