"""Pod requests, limits and QoS follow Kubernetes' helpers, sidecars and overhead included."""

from __future__ import annotations

import pytest

from scoring.object_fields import ObjectError
from scoring.objects import parse_pod
from tests.scoring.builders import make_container, make_pod


def pod(**kwargs: object) -> dict[str, object]:
    return make_pod("p", **kwargs)  # type: ignore[arg-type]


def test_requests_sum_containers_and_take_init_peak() -> None:
    p = parse_pod(
        pod(
            containers=[make_container("a", {"cpu": "500m"}), make_container("b", {"cpu": "1"})],
            init_containers=[make_container("i", {"cpu": "2", "memory": "1Gi"})],
        )
    )
    assert p.requests == {"cpu": 2000, "memory": 2**30}


def test_sidecars_add_to_everything_after_them() -> None:
    # Upstream example (KEP-753): a sidecar keeps running while later init containers run.
    p = parse_pod(
        pod(
            containers=[make_container("app", {"cpu": "1"})],
            init_containers=[
                make_container("init-1", {"cpu": "3"}),
                make_container("sidecar", {"cpu": "1"}, restart_policy="Always"),
                make_container("init-2", {"cpu": "2500m"}),
            ],
        )
    )
    # containers + sidecar = 2; init peak = max(3, sidecar 1, 2.5 + sidecar 1 = 3.5) = 3.5
    assert p.requests["cpu"] == 3500


def test_overhead_is_added_to_requests_and_only_to_set_limits() -> None:
    manifest = pod(containers=[make_container("a", {"cpu": "1"}, {"cpu": "2"})])
    manifest["spec"]["overhead"] = {"cpu": "250m", "memory": "100Mi"}  # type: ignore[index]
    p = parse_pod(manifest)
    assert p.requests == {"cpu": 1250, "memory": 100 * 2**20}
    assert p.limits == {"cpu": 2250}


def test_limits_default_missing_requests_like_the_api_server() -> None:
    p = parse_pod(pod(containers=[make_container("a", None, {"cpu": "2", "memory": "1Gi"})]))
    assert p.requests == {"cpu": 2000, "memory": 2**30}
    assert p.qos_class == "Guaranteed"


def test_non_zero_requests_default_only_missing_keys() -> None:
    p = parse_pod(
        pod(containers=[make_container("a", {"cpu": "0"}), make_container("b", {"memory": "1Gi"})])
    )
    # a: cpu explicit 0, memory missing → 200Mi; b: cpu missing → 100m.
    assert p.non_zero_requests == (100, 2**30 + 200 * 2**20)
    assert parse_pod(pod()).non_zero_requests == (0, 0)


@pytest.mark.parametrize(
    ("containers", "qos"),
    [
        ([make_container("a")], "BestEffort"),
        ([make_container("a", {"cpu": "1"})], "Burstable"),
        (
            [make_container("a", {"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})],
            "Guaranteed",
        ),
        (
            [make_container("a", {"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"})],
            "Burstable",
        ),
        (
            [
                make_container("a", {"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"}),
                make_container("b", {"cpu": "1"}, {"cpu": "1"}),
            ],
            "Burstable",
        ),
        ([make_container("a", {"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"})], "BestEffort"),
    ],
)
def test_qos_class(containers: list[dict[str, object]], qos: str) -> None:
    assert parse_pod(pod(containers=containers)).qos_class == qos


def test_status_qos_class_wins() -> None:
    assert parse_pod(pod(status={"qosClass": "Guaranteed"})).qos_class == "Guaranteed"


def test_bad_quantity_names_object_and_field() -> None:
    with pytest.raises(
        ObjectError, match=r"Pod default/p: spec.containers\[0\].resources.requests.cpu"
    ):
        parse_pod(pod(containers=[make_container("a", {"cpu": "lots"})]))
