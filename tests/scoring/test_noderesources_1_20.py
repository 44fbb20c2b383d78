"""Resource scoring with kube-scheduler 1.20 semantics (targets before 1.22), on overcommitted
nodes among others.

Every expected value is worked out by hand from the v1.20.2 sources
(``pkg/scheduler/framework/plugins/noderesources/``): ``leastRequestedScore``,
``mostRequestedScore``, ``buildRequestedToCapacityRatioScorerFunction`` and
``balancedResourceScorer``, with requests from ``calculateResourceAllocatableRequest`` (non-zero
cpu / memory: 100m / 200Mi for a container without the key). The 1.35 value is given where the
point is that it differs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest

from scoring.config import Target, load_configuration
from scoring.engine import Engine, Framework
from scoring.framework import Cycle, Plugin
from scoring.objects import parse_pod
from scoring.plugins import noderesources, noderesources_1_20
from scoring.snapshot import Snapshot
from tests.scoring.builders import make_container, make_node, make_pod

GI = 1 << 30
MI = 1 << 20
NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)
RESOURCES = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]
LINEAR = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]


def _cluster() -> list[dict[str, Any]]:
    """over: 4 cpu / 8Gi holding 3 cpu / 2Gi; room: 4 cpu / 8Gi holding 1 cpu / 1Gi;
    thirds: 3 cpu / 3Gi, empty."""
    objects = [
        make_node("over", {"cpu": 4000, "memory": 8 * GI, "pods": 110}),
        make_node("room", {"cpu": 4000, "memory": 8 * GI, "pods": 110}),
        make_node("thirds", {"cpu": 3000, "memory": 3 * GI, "pods": 110}),
    ]
    for node, cpu, memory in (("over", 3000, 2 * GI), ("room", 1000, GI)):
        container = make_container("app", {"cpu": cpu, "memory": memory})
        objects.append(make_pod(f"on-{node}", containers=[container], node_name=node))
    return objects


def _scores(
    plugin: Plugin, requests: Mapping[str, int] | None = None, cluster: Sequence[Any] = ()
) -> dict[str, int]:
    """The plugin's raw score of every node for a pod with ``requests`` (2 cpu / 1Gi)."""
    snapshot = Snapshot.from_objects(list(cluster) or _cluster(), warn=lambda _: None)
    wanted = {"cpu": 2000, "memory": GI} if requests is None else requests
    pod = parse_pod(make_pod("incoming", containers=[make_container("app", wanted or None)]))
    nodes = np.arange(len(snapshot), dtype=np.int64)
    scores = plugin.score(Cycle(pod, snapshot, NOW), nodes)
    return dict(zip(snapshot.node_names, scores.tolist(), strict=True))


def test_least_allocated_scores_an_overcommitted_resource_0() -> None:
    # over: cpu 3000 + 2000 = 5000 > 4000 -> 0; memory (8 - 3) * 100 / 8 = 62; (0 + 62) / 2 = 31.
    # room: cpu (4000 - 3000) * 100 / 4000 = 25; memory (8 - 2) * 100 / 8 = 75; 50.
    # thirds: cpu 1000 * 100 / 3000 = 33; memory 2Gi * 100 / 3Gi = 66; 49.
    plugin = noderesources_1_20.LeastAllocated({"resources": RESOURCES})
    assert _scores(plugin) == {"over": 31, "room": 50, "thirds": 49}


def test_most_allocated_scores_an_overcommitted_resource_0_not_100() -> None:
    # over: cpu over capacity -> 0 (1.35 clamps to 4000 -> 100); memory 3 * 100 / 8 = 37;
    #   (0 + 37) / 2 = 18 (1.35: (100 + 37) / 2 = 68).
    # room: cpu 3000 * 100 / 4000 = 75; memory 2 * 100 / 8 = 25; 50.
    # thirds: cpu 2000 * 100 / 3000 = 66; memory 1Gi * 100 / 3Gi = 33; (66 + 33) / 2 = 49.
    plugin = noderesources_1_20.MostAllocated({"resources": RESOURCES})
    assert _scores(plugin) == {"over": 18, "room": 50, "thirds": 49}
    current = noderesources.NodeResourcesFit(
        {"scoringStrategy": {"type": "MostAllocated", "resources": RESOURCES}}
    )
    assert _scores(current)["over"] == 68


def test_the_weighted_average_counts_resources_nothing_is_allocatable_of() -> None:
    # A gpu no node has: score 0, yet its weight 2 divides. room: (25 + 75 + 0) / 4 = 25
    # (1.35 leaves it out: 50). Most: room (75 + 25 + 0) / 4 = 25.
    resources = [*RESOURCES, {"name": "example.com/gpu", "weight": 2}]
    least = noderesources_1_20.LeastAllocated({"resources": resources})
    most = noderesources_1_20.MostAllocated({"resources": resources})
    assert _scores(least)["room"] == 25
    assert _scores(most)["room"] == 25


def test_requested_to_capacity_ratio_rounds_the_used_share_up() -> None:
    # Utilization = 100 - (capacity - requested) * 100 / capacity; the shape is score = util
    # (10 * 10). over: cpu over capacity -> 100; memory 100 - 5 * 100 / 8 (62) = 38;
    #   round((100 + 38) / 2) = 69.
    # room: cpu 100 - 25 = 75; memory 100 - 75 = 25; 50.
    # thirds: cpu 100 - 1000 * 100 / 3000 (33) = 67 (1.35: 2000 * 100 / 3000 = 66); memory
    #   100 - 2Gi * 100 / 3Gi (66) = 34 (1.35: 33); round(50.5) = 51 (1.35: round(49.5) = 50).
    plugin = noderesources_1_20.RequestedToCapacityRatio({"shape": LINEAR, "resources": RESOURCES})
    assert _scores(plugin) == {"over": 69, "room": 50, "thirds": 51}
    current = noderesources.NodeResourcesFit(
        {
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "resources": RESOURCES,
                "requestedToCapacityRatio": {"shape": LINEAR},
            }
        }
    )
    assert _scores(current)["thirds"] == 50


def test_balanced_allocation_is_0_once_a_fraction_reaches_1() -> None:
    # over: cpu 5000 / 4000 = 1.25 >= 1 -> 0 (1.35: fractions capped at 1, std (1 - 0.375) / 2
    #   = 0.3125, (1 - 0.3125) * 100 = 68).
    # room: cpu 0.75, memory 0.25; (1 - 0.5) * 100 = 50 (1.35: 1 - 0.25 -> 75).
    # thirds: cpu 2/3, memory 1/3; (1 - 1/3) * 100 = 66.67 -> 66.
    plugin = noderesources_1_20.BalancedAllocation({})
    assert _scores(plugin) == {"over": 0, "room": 50, "thirds": 66}
    assert _scores(noderesources.BalancedAllocation({}))["over"] == 68


def test_balanced_allocation_scores_request_less_pods_at_the_non_zero_defaults() -> None:
    # An empty 1 cpu / 1Gi node and a pod without requests: cpu 100 / 1000 = 0.1, memory
    # 200Mi / 1024Mi = 0.1953125; (1 - 0.0953125) * 100 = 90.47 -> 90. 1.35 skips such pods.
    cluster = [make_node("small", {"cpu": 1000, "memory": GI, "pods": 110})]
    plugin = noderesources_1_20.BalancedAllocation({})
    assert _scores(plugin, {}, cluster) == {"small": 90}


def test_balanced_allocation_is_0_on_a_node_without_memory() -> None:
    # Nothing allocatable: fractionOfCapacity is 1, so the node scores 0.
    cluster = [make_node("cpu-only", {"cpu": 4000, "pods": 110})]
    assert _scores(noderesources_1_20.BalancedAllocation({}), None, cluster) == {"cpu-only": 0}


def _framework(version: str, minor: str) -> Framework:
    document = {
        "apiVersion": f"kubescheduler.config.k8s.io/{version}",
        "kind": "KubeSchedulerConfiguration",
    }
    config = load_configuration(document, target=Target("kube-scheduler", minor))
    pod = parse_pod(make_pod("p", containers=[make_container("app")]))
    return Engine(config).framework_for(pod)


@pytest.mark.parametrize(
    ("minor", "least", "balanced"),
    [
        ("1.20", noderesources_1_20.LeastAllocated, noderesources_1_20.BalancedAllocation),
        ("1.21", noderesources_1_20.LeastAllocated, noderesources_1_20.BalancedAllocation),
        ("1.22", noderesources_1_20.LeastAllocatedAsFit, noderesources.BalancedAllocation),
    ],
)
def test_the_target_release_chooses_the_semantics(
    minor: str, least: type[Plugin], balanced: type[Plugin]
) -> None:
    framework = _framework("v1beta1", minor)
    assert type(framework.instances["NodeResourcesLeastAllocated"]) is least
    assert type(framework.instances["NodeResourcesBalancedAllocation"]) is balanced


def test_current_releases_keep_the_current_scorers() -> None:
    framework = _framework("v1", "1.30")
    assert type(framework.instances["NodeResourcesBalancedAllocation"]) is (
        noderesources.BalancedAllocation
    )


def test_the_1_20_plugins_keep_their_names_in_decisions() -> None:
    framework = _framework("v1beta1", "1.20")
    snapshot = Snapshot.from_objects(_cluster(), warn=lambda _: None)
    pod = parse_pod(make_pod("p", containers=[make_container("app", {"cpu": 2000, "memory": GI})]))
    decision = framework.evaluate(pod, snapshot, NOW)
    plugins = {score.plugin for score in decision.scores}
    assert {"NodeResourcesLeastAllocated", "NodeResourcesBalancedAllocation"} <= plugins
    detail = framework.instances["NodeResourcesLeastAllocated"].explain(
        Cycle(pod, snapshot, NOW), snapshot.node_names.index("over")
    )
    assert detail is not None
    assert detail["semantics"] == "kube-scheduler 1.20"
    assert detail["scored"][0] == {
        "name": "cpu",
        "weight": 1,
        "allocatable": 4000,
        "requested": 5000,
        "score": 0,
    }
