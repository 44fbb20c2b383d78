"""Batch placement: pods in order, each Reserve changing what the next pod sees."""

from __future__ import annotations

from typing import Any

import pytest

from scoring.config import load_configuration
from scoring.engine import Engine
from scoring.errors import InputError
from scoring.objects import Pod, parse_pod
from scoring.plugins.limitaware.limits import RAW
from scoring.plugins.limitaware.plugin import LimitAware
from scoring.simulation.simulator import simulate
from scoring.snapshot import Snapshot
from tests.scoring.builders import make_container, make_node, make_pod
from tests.scoring.loadaware_vectors import metric, node_metric
from tests.scoring.nrt_builders import NOW, nrt, zone

GI = 1 << 30


def config(*extra: str, profiles: tuple[str, ...] = ("default-scheduler",)) -> Engine:
    return Engine(
        load_configuration(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {
                        "schedulerName": name,
                        "plugins": {"multiPoint": {"enabled": [{"name": p} for p in extra]}},
                    }
                    for name in profiles
                ],
            }
        )
    )


def pod(name: str, cpu: int, *, limit: int | None = None, scheduler: str | None = None) -> Pod:
    limits = None if limit is None else {"cpu": limit}
    manifest = make_pod(
        name,
        containers=[make_container("c", {"cpu": cpu, "memory": GI}, limits)],
        scheduler_name=scheduler,
    )
    manifest["metadata"]["uid"] = f"uid-{name}"
    return parse_pod(manifest)


def nodes(*cpus: int, **extra: Any) -> Snapshot:
    objects: list[dict[str, Any]] = [
        make_node(f"n{i}", {"cpu": cpu, "memory": 16 * GI, "pods": 10})
        for i, cpu in enumerate(cpus)
    ]
    objects += extra.get("objects", [])
    return Snapshot.from_objects(objects, warn=lambda _: None)


@pytest.mark.parametrize("use_cache", [True, False])
def test_each_placement_is_reserved_before_the_next_pod_is_evaluated(use_cache: bool) -> None:
    snapshot = nodes(2000, 2000)
    pods = [pod(f"p{i}", 1000) for i in range(5)]
    run = simulate(config(), snapshot, pods, NOW, use_cache=use_cache)
    # LeastAllocated spreads; ties go to the first name; the fifth pod fits nowhere.
    assert [p.node for p in run.placements] == ["n0", "n1", "n0", "n1", None]
    assert run.placed == 4 and run.unschedulable == 1
    assert run.placements[4].reason == "0/2 nodes are available: 2 Insufficient cpu."
    cpu = snapshot.resource_index["cpu"]
    assert snapshot.requested[:, cpu].tolist() == [2000, 2000]
    assert [len(p) for p in snapshot.pods_on_node] == [2, 2]
    assert run.cache is None if not use_cache else run.cache is not None


def test_limits_reserved_by_earlier_pods_block_later_ones() -> None:
    snapshot = nodes(4000)
    pods = [pod(f"p{i}", 100, limit=2000) for i in range(3)]
    run = simulate(config("LimitAware"), snapshot, pods, NOW)
    assert [p.node for p in run.placements] == ["n0", "n0", None]
    assert run.placements[2].reason == "0/1 nodes are available: 1 Insufficient cpu limit."
    totals = LimitAware({}).totals(snapshot)
    assert totals.column(RAW, "cpu").tolist() == [4000]


def test_load_aware_estimates_of_placed_pods_count_for_the_next_ones() -> None:
    metrics = [node_metric(metric({"cpu": 0, "memory": 0}, node="n0"), "2026-11-22T12:00:00Z")]
    snapshot = nodes(4000, objects=metrics)
    # Default estimation: 85% of the cpu limit; the usage threshold defaults to 65% of cpu.
    pods = [pod(f"p{i}", 1000, limit=1000) for i in range(4)]
    run = simulate(config("LoadAwareScheduling"), snapshot, pods, NOW)
    assert [p.node for p in run.placements] == ["n0", "n0", "n0", None]
    assert run.placements[3].reason == (
        "0/1 nodes are available: 1 node(s) cpu usage exceed threshold."
    )


def test_numa_availability_follows_placements() -> None:
    cells = [zone(f"node-{i}", {"cpu": 2000, "memory": 4 * GI}) for i in (0, 1)]
    topology = nrt("n0", cells, attributes={"topologyManagerPolicy": "single-numa-node"})
    snapshot = nodes(8000, objects=[topology])
    pods = [  # Guaranteed: each takes 1.5 cores of one NUMA cell
        parse_pod(
            make_pod(
                f"g{i}",
                containers=[
                    make_container("c", {"cpu": 1500, "memory": GI}, {"cpu": 1500, "memory": GI})
                ],
            )
        )
        for i in range(3)
    ]
    run = simulate(config("NodeResourceTopologyMatch"), snapshot, pods, NOW)
    assert [p.node for p in run.placements] == ["n0", "n0", None]
    assert run.placements[2].reason == "0/1 nodes are available: 1 cannot align container."


def test_pods_are_routed_to_the_profile_their_scheduler_name_picks() -> None:
    engine = config(profiles=("default-scheduler", "batch"))
    pods = [pod("a", 100), pod("b", 100, scheduler="batch")]
    run = simulate(engine, nodes(1000), pods, NOW)
    assert [(p.profile, p.node) for p in run.placements] == [
        ("default-scheduler", "n0"),
        ("batch", "n0"),
    ]


def test_a_pod_without_a_profile_fails_before_anything_is_placed() -> None:
    snapshot = nodes(1000)
    with pytest.raises(InputError, match="no profile named 'other'"):
        simulate(config(), snapshot, [pod("a", 100), pod("b", 100, scheduler="other")], NOW)
    assert snapshot.pods_on_node == [[]]


def test_the_cache_reports_its_reuse() -> None:
    pods = [pod(f"p{i}", 100) for i in range(10)]
    run = simulate(config(), nodes(4000, 4000, 4000), pods, NOW)
    assert run.cache is not None
    assert run.cache.filter_misses > 0 and run.cache.filter_hits > run.cache.filter_misses
    # Each placement dirties one node for the resource filter.
    assert run.cache.filter_nodes_recomputed == 9


@pytest.mark.parametrize("use_cache", [True, False])
def test_a_pod_without_a_profile_can_stay_pending_as_kube_scheduler_leaves_it(
    use_cache: bool,
) -> None:
    snapshot = nodes(1000)
    pods = [pod("a", 600), pod("b", 600, scheduler="batch"), pod("c", 600)]
    seen: list[int] = []
    run = simulate(
        config(),
        snapshot,
        pods,
        NOW,
        use_cache=use_cache,
        progress=seen.append,
        unrouted_pending=True,
    )
    assert [(p.node, p.routed) for p in run.placements] == [
        ("n0", True),
        (None, False),
        (None, True),
    ]
    assert run.placements[1].reason == "no profile for schedulerName batch"
    assert run.placements[1].profile == "batch"
    assert (run.placed, run.pending, run.unschedulable) == (1, 1, 1)
    assert seen == [1, 2, 3]
    assert [p.key for p in snapshot.pods_on_node[0]] == ["default/a"]  # b reserved nothing
