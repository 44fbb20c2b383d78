"""What-if: the same workload under two configurations, and the cluster each leaves behind."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from scoring.config import load_configuration
from scoring.engine import Engine
from scoring.objects import Pod, parse_pod
from scoring.simulation.compare import differences, simulation_report, what_if
from scoring.simulation.metrics import reported_resources, utilization
from scoring.snapshot import Snapshot
from tests.scoring.builders import (
    enabled,
    make_container,
    make_node,
    make_pod,
    single_profile_config,
)
from tests.scoring.loadaware_vectors import metric, node_metric
from tests.scoring.nrt_builders import NOW

GI = 1 << 30
THRESHOLDS = "scheduling.koordinator.sh/usage-thresholds"


def engine(strategy: str = "LeastAllocated", *extra: str) -> Engine:
    fit = {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": strategy}}}
    return Engine(load_configuration(single_profile_config(enabled(*extra), [fit])))


def pods(count: int, cpu: int, limit: int | None = None) -> list[Pod]:
    out = []
    for i in range(count):
        limits = None if limit is None else {"cpu": limit, "memory": GI}
        manifest = make_pod(
            f"w{i}", containers=[make_container("c", {"cpu": cpu, "memory": GI}, limits)]
        )
        manifest["metadata"]["uid"] = f"uid-{i}"
        out.append(parse_pod(manifest))
    return out


def cluster(*extra: dict[str, Any]) -> Snapshot:
    objects = [make_node(f"n{i}", {"cpu": 4000, "memory": 8 * GI, "pods": 20}) for i in range(3)]
    return Snapshot.from_objects([*objects, *extra], warn=lambda _: None)


def test_each_configuration_starts_from_the_same_untouched_cluster() -> None:
    snapshot = cluster()
    runs = what_if(
        snapshot,
        pods(3, 1000),
        NOW,
        [("spread", engine("LeastAllocated")), ("pack", engine("MostAllocated"))],
    )
    assert [p.node for p in runs[0].placements] == ["n0", "n1", "n2"]
    assert [p.node for p in runs[1].placements] == ["n0", "n0", "n0"]
    assert snapshot.pods_on_node == [[], [], []]  # the original is untouched
    moved = differences(runs[0], runs[1])
    assert [(d.pod, d.nodes) for d in moved] == [
        ("default/w1", ("n1", "n0")),
        ("default/w2", ("n2", "n0")),
    ]


def test_utilization_is_requested_over_allocatable_across_nodes() -> None:
    run = what_if(cluster(), pods(3, 1000), NOW, [("pack", engine("MostAllocated"))])[0]
    usage = utilization(run.engine, run.snapshot, NOW, ["cpu", "memory"])
    cpu = usage["cpu"]
    assert cpu.max == 0.75 and math.isclose(cpu.mean, 0.25)
    assert math.isclose(cpu.stddev, math.sqrt((0.5**2 + 2 * 0.25**2) / 3))
    assert cpu.over_threshold is None  # LoadAwareScheduling is not enabled
    assert usage["memory"].max == 3 / 8


def test_limit_oversubscription_counts_nodes_whose_limits_exceed_allocatable() -> None:
    runs = what_if(cluster(), pods(3, 1000, limit=3000), NOW, [("pack", engine("MostAllocated"))])
    usage = utilization(runs[0].engine, runs[0].snapshot, NOW, ["cpu", "memory"])
    assert usage["cpu"].limit_oversubscribed == 1  # 9 cores of limits on a 4-core node
    assert usage["memory"].limit_oversubscribed == 0


def test_nodes_over_their_load_threshold_are_counted_with_load_aware_scheduling() -> None:
    metrics = [
        node_metric(metric({"cpu": cpu, "memory": GI}, node=f"n{i}"), "2026-11-22T12:00:00Z")
        for i, cpu in enumerate([3000, 1000, 1000])
    ]
    busy_threshold = make_node("n1", {"cpu": 4000, "memory": 8 * GI, "pods": 20})
    busy_threshold["metadata"]["annotations"][THRESHOLDS] = json.dumps(
        {"usageThresholds": {"cpu": 20}}
    )
    objects = [
        make_node("n0", {"cpu": 4000, "memory": 8 * GI, "pods": 20}),
        busy_threshold,
        make_node("n2", {"cpu": 4000, "memory": 8 * GI, "pods": 20}),
        *metrics,
    ]
    snapshot = Snapshot.from_objects(objects, warn=lambda _: None)
    run = what_if(snapshot, [], NOW, [("load", engine("LeastAllocated", "LoadAwareScheduling"))])[0]
    usage = utilization(run.engine, run.snapshot, NOW, ["cpu", "memory"])
    # n0: 75% > 65% (default); n1: 25% > its own 20%; n2: 25% is fine.
    assert usage["cpu"].over_threshold == 2
    assert usage["memory"].over_threshold == 0


def test_reported_resources_add_requested_extended_resources_some_node_has() -> None:
    gpu = make_node("g", {"cpu": 1000, "example.com/gpu": 2})
    snapshot = Snapshot.from_objects([gpu], warn=lambda _: None)
    wants = parse_pod(
        make_pod("p", containers=[make_container("c", {"example.com/gpu": 1, "example.com/x": 1})])
    )
    assert reported_resources(snapshot, [wants]) == ["cpu", "memory", "example.com/gpu"]


@pytest.mark.parametrize("runs", [1, 2])
def test_the_report_has_the_contract_shape(runs: int) -> None:
    configurations = [("a.yaml", engine("LeastAllocated")), ("b.yaml", engine("MostAllocated"))]
    results = what_if(cluster(), pods(2, 5000), NOW, configurations[:runs])
    report = simulation_report(results)
    first = report["runs"][0]
    assert first["config"] == "a.yaml"
    assert (first["placed"], first["unschedulable"]) == (0, 2)
    assert first["pods"][0] == {
        "pod": "default/w0",
        "profile": "default-scheduler",
        "selectedNode": None,
        "reason": "0/3 nodes are available: 3 Insufficient cpu.",
    }
    assert set(first["utilization"]) == {"cpu", "memory"}
    assert set(first["utilization"]["cpu"]) >= {"mean", "stddev", "max", "overThreshold"}
    assert ("differences" in report) == (runs == 2)
    json.dumps(report)  # serializable as is


def test_distribution_counts_nodes_per_ten_percent_band_of_requests() -> None:
    run = what_if(cluster(), pods(3, 1000), NOW, [("pack", engine("MostAllocated"))])[0]
    report = simulation_report([run])["runs"][0]
    # n0 holds 3 of 4 cores (75%), n1 and n2 nothing; memory 3 GiB of 8 (37.5%).
    assert report["distribution"]["cpu"] == [2, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]
    assert report["distribution"]["memory"] == [2, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]


def test_a_full_node_lands_in_the_last_band() -> None:
    run = what_if(cluster(), pods(4, 1000), NOW, [("pack", engine("MostAllocated"))])[0]
    cpu = simulation_report([run])["runs"][0]["distribution"]["cpu"]
    assert cpu[-1] == 1 and sum(cpu) == 3


def test_progress_counts_pods_over_every_configuration_and_can_stop_the_run() -> None:
    seen: list[int] = []
    configurations = [("a", engine("LeastAllocated")), ("b", engine("MostAllocated"))]
    what_if(cluster(), pods(3, 100), NOW, configurations, progress=seen.append)
    assert seen == [1, 2, 3, 4, 5, 6]

    class Stop(Exception):
        pass

    def stop_after_two(done: int) -> None:
        if done == 2:
            raise Stop

    with pytest.raises(Stop):
        what_if(cluster(), pods(3, 100), NOW, configurations, progress=stop_after_two)


def test_a_configuration_without_the_pods_profile_leaves_them_pending() -> None:
    manifest = make_pod("batch-0", containers=[make_container("c", {"cpu": 100, "memory": GI})])
    manifest["spec"]["schedulerName"] = "batch"
    workload = [*pods(2, 1000), parse_pod(manifest)]
    with pytest.raises(Exception, match="no profile named 'batch'"):
        what_if(cluster(), workload, NOW, [("spread", engine())])
    two_profiles = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": "default-scheduler"}, {"schedulerName": "batch"}],
        }
    )
    runs = what_if(
        cluster(),
        workload,
        NOW,
        [("one profile", engine()), ("two profiles", Engine(two_profiles))],
        unrouted_pending=True,
    )
    assert [(r.placed, r.pending, r.unschedulable) for r in runs] == [(2, 1, 0), (3, 0, 0)]
    assert runs[0].placements[2].reason == "no profile for schedulerName batch"
    assert [d.pod for d in differences(runs[0], runs[1])] == ["default/batch-0"]
