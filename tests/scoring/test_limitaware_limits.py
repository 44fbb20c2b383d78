"""Pod limits as LimitAware counts them, and node totals kept incrementally."""

from __future__ import annotations

import random
from typing import Any

import pytest

from scoring.objects import Pod, parse_pod
from scoring.plugins.limitaware.limits import NON_ZERO, RAW, LimitTotals, pod_limits
from scoring.snapshot import Snapshot
from tests.scoring.builders import make_container, make_node, make_pod

MI = 1 << 20


def limits_of(containers: list[dict[str, Any]], **extra: Any) -> Any:
    return pod_limits(parse_pod(make_pod("p", containers=containers, **extra)))


def test_a_request_without_limit_counts_as_the_limit() -> None:
    got = limits_of([make_container("c", {"cpu": "1", "memory": "2000"})])
    assert dict(got.raw) == {"cpu": 1000, "memory": 2000, "ephemeral-storage": 0}
    assert dict(got.non_zero) == dict(got.raw)


def test_each_container_counts_the_larger_of_limit_and_request() -> None:
    got = limits_of(
        [
            make_container("a", {"cpu": "500m", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}),
            make_container("b", {"cpu": "1"}, {"memory": "512Mi"}),
        ]
    )
    assert got.raw["cpu"] == 3000
    assert got.raw["memory"] == 1024 * MI + 512 * MI


def test_non_zero_defaults_only_a_missing_cpu_or_memory_key() -> None:
    missing = limits_of([make_container("c", {"ephemeral-storage": "1Gi"})])
    assert (missing.raw["cpu"], missing.raw["memory"]) == (0, 0)
    assert (missing.non_zero["cpu"], missing.non_zero["memory"]) == (100, 200 * MI)
    explicit = limits_of([make_container("c", {"cpu": "0", "memory": "0"})])
    assert (explicit.non_zero["cpu"], explicit.non_zero["memory"]) == (0, 0)


def test_init_containers_take_the_max_and_overhead_is_added() -> None:
    got = limits_of(
        [make_container("a", {"cpu": "1", "memory": "1Gi"}), make_container("b", {"cpu": "1"})],
        init_containers=[
            make_container("i", {"cpu": "3", "vendor.com/fpga": "1"}),
            # A sidecar is treated like any init container (no running sum), as Koordinator does.
            make_container("s", {"cpu": "4"}, restart_policy="Always"),
        ],
        spec={"overhead": {"cpu": "250m"}},
    )
    assert got.raw["cpu"] == 4000 + 250
    assert got.raw["vendor.com/fpga"] == 1
    # non-zero: containers 1000 + 1000, init max(…, 3000, 4000) → 4000, + 250 overhead.
    assert got.non_zero["cpu"] == 4250
    # memory: b lacks it (200Mi) → 1Gi + 200Mi; the init containers lack it too (200Mi each).
    assert got.non_zero["memory"] == 1024 * MI + 200 * MI


def test_scalar_keys_count_even_at_zero_and_unknown_names_are_dropped() -> None:
    got = limits_of([make_container("c", {"example.com/a": "0", "gpu": "2"})])
    assert got.scalars == frozenset({"example.com/a"})
    assert "gpu" not in got.raw
    assert not got.empty
    assert limits_of([make_container("c")]).empty


def _cluster(nodes: int) -> Snapshot:
    objects = [make_node(f"n{i}", {"cpu": "64", "memory": "256Gi"}) for i in range(nodes)]
    return Snapshot.from_objects(objects)


def _random_pod(rng: random.Random, i: int) -> Pod:
    containers = []
    for k in range(rng.randint(1, 3)):
        requests = {"cpu": f"{rng.choice([0, 100, 250, 1000])}m"} if rng.random() < 0.7 else {}
        limits = {"memory": f"{rng.randint(0, 4)}Gi"} if rng.random() < 0.6 else {}
        if rng.random() < 0.2:
            limits["example.com/dev"] = str(rng.randint(0, 2))
        containers.append(make_container(f"c{k}", requests, limits))
    inits = [make_container("i", {"cpu": "2"})] if rng.random() < 0.2 else []
    spec = {"overhead": {"cpu": "100m", "memory": "64Mi"}} if rng.random() < 0.2 else None
    return parse_pod(make_pod(f"p{i}", containers=containers, init_containers=inits, spec=spec))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_incremental_totals_equal_a_recomputation_after_random_adds_and_removes(seed: int) -> None:
    rng = random.Random(seed)
    snap = _cluster(4)
    totals = snap.extension("limitaware.totals", LimitTotals)
    placed: list[tuple[Pod, int]] = []
    for i in range(200):
        if placed and rng.random() < 0.35:
            victim, node = placed.pop(rng.randrange(len(placed)))
            snap.forget_pod(victim, node)
        else:
            node = rng.randrange(4)
            new = _random_pod(rng, i)
            snap.assume_pod(new, node)
            placed.append((new, node))
        if i % 20 == 19:
            fresh = LimitTotals(snap)
            for kind in (RAW, NON_ZERO):
                for name in set(totals.columns) | set(fresh.columns):
                    assert totals.column(kind, name).tolist() == fresh.column(kind, name).tolist()
    assert any(totals.column(NON_ZERO, "example.com/dev"))
