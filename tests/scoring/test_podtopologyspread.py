"""PodTopologySpread beyond upstream's vectors: default selectors, explanations, bad input,
and spreading during ``simulate``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scoring.config import load_configuration
from scoring.engine import Engine
from scoring.framework import Code
from scoring.objects import parse_pod
from scoring.plugins.podtopologyspread.plugin import go_round
from scoring.simulation.workload import expand_workload, workload_controllers
from scoring.snapshot import Snapshot
from tests.scoring.builders import (
    make_container,
    make_node,
    make_pod,
    object_list,
    run_cli,
    single_profile_config,
    write_json,
)

GI = 1 << 30
ZONE = "topology.kubernetes.io/zone"
PLUGIN = "PodTopologySpread"
RS_OWNER = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "controller": True}


def cluster(*extra: dict[str, Any]) -> list[dict[str, Any]]:
    """Three nodes in two zones; node-a holds two web pods, node-c one."""
    nodes = [
        make_node(name, {"cpu": 8000, "memory": 16 * GI, "pods": 110}, labels={ZONE: zone})
        for name, zone in (("node-a", "z1"), ("node-b", "z1"), ("node-c", "z2"))
    ]
    pods = [
        make_pod(name, node_name=node, labels={"app": "web"})
        for name, node in (("web-a1", "node-a"), ("web-a2", "node-a"), ("web-c1", "node-c"))
    ]
    return [*nodes, *pods, *extra]


def spread_profile(args: dict[str, Any] | None = None) -> Engine:
    star = [{"name": "*"}]
    plugins = {
        point: {"disabled": star, "enabled": [{"name": PLUGIN}]}
        for point in ("preFilter", "filter", "preScore", "score")
    }
    config = [{"name": PLUGIN, "args": args}] if args is not None else []
    return Engine(load_configuration(single_profile_config(plugins, config)))


def decide(objects: list[dict[str, Any]], pod: dict[str, Any], args: dict[str, Any] | None = None):  # type: ignore[no-untyped-def]
    snapshot = Snapshot.from_objects(objects, warn=lambda _: None)
    return spread_profile(args).evaluate(parse_pod(pod), snapshot)


def score_of(decision: Any, node: str) -> int | None:
    entry = decision.node_entry(decision.cycle.snapshot.index[node], explain=False)
    return next((s["normalized"] for s in entry["scores"] if s["plugin"] == PLUGIN), None)


def web_pod(**metadata: Any) -> dict[str, Any]:
    pod = make_pod("web-new", labels={"app": "web"})
    pod["metadata"].update(metadata)
    return pod


def replica_set(selector: Any, name: str = "web-1") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": selector},
    }


# -- system default constraints ------------------------------------------------------------------


def test_a_pod_no_service_or_controller_selects_gets_no_default_spreading() -> None:
    decision = decide(cluster(), web_pod(ownerReferences=[RS_OWNER]))
    assert score_of(decision, "node-b") is None  # PreScore skipped: no constraints


def test_system_defaults_spread_by_the_replica_sets_selector() -> None:
    rs = replica_set({"matchLabels": {"app": "web"}})
    decision = decide(cluster(rs), web_pod(ownerReferences=[RS_OWNER]))
    scores = {n: score_of(decision, n) for n in ("node-a", "node-b", "node-c")}
    # raw = count * log(domains + 2) + maxSkew - 1, summed over hostname (3) and zone (5):
    # a = 2*ln5 + 2 + 2*ln4 + 4 -> 12, b = 0 + 2 + 2*ln4 + 4 -> 9, c = ln5 + 2 + ln4 + 4 -> 9
    high, low = 12, 9
    assert scores == {
        "node-a": 100 * (high + low - 12) // high,
        "node-b": 100 * (high + low - 9) // high,
        "node-c": 100 * (high + low - 9) // high,
    }


@pytest.mark.parametrize(
    ("owner", "objects"),
    [
        (
            {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web-1", "controller": True},
            [{**replica_set({"matchLabels": {"app": "web"}}), "kind": "StatefulSet"}],
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "ReplicationController",
                "name": "web-1",
                "controller": True,
            },
            [
                {
                    "apiVersion": "v1",
                    "kind": "ReplicationController",
                    "metadata": {"name": "web-1", "namespace": "default"},
                    "spec": {"selector": {"app": "web"}},
                }
            ],
        ),
        (
            None,
            [
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": {"name": "web", "namespace": "default"},
                    "spec": {"selector": {"app": "web"}},
                }
            ],
        ),
    ],
    ids=["StatefulSet", "ReplicationController", "Service"],
)
def test_every_kind_of_default_selector_source(owner: Any, objects: list[Any]) -> None:
    pod = web_pod(ownerReferences=[owner]) if owner else web_pod()
    decision = decide(cluster(*objects), pod)
    assert score_of(decision, "node-a") < score_of(decision, "node-b")  # type: ignore[operator]


def test_default_selector_ignores_other_namespaces_and_wrong_api_versions() -> None:
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web", "namespace": "other"},
        "spec": {"selector": {"app": "web"}},
    }
    owner = {**RS_OWNER, "apiVersion": "extensions/v1beta1"}
    rs = replica_set({"matchLabels": {"app": "web"}})
    decision = decide(cluster(service, rs), web_pod(ownerReferences=[owner]))
    assert score_of(decision, "node-a") is None


def test_list_defaulting_with_a_hard_default_constraint_filters() -> None:
    args = {
        "defaultingType": "List",
        "defaultConstraints": [
            {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule"}
        ],
    }
    rs = replica_set({"matchLabels": {"app": "web"}})
    decision = decide(cluster(rs), web_pod(ownerReferences=[RS_OWNER]), args)
    (outcome,) = decision.filters
    codes = [outcome.result.status(i).code for i in range(3)]
    assert codes == [Code.UNSCHEDULABLE, Code.UNSCHEDULABLE, Code.SUCCESS]  # z1 has 2, z2 has 1


# -- explanation and bad input --------------------------------------------------------------------


def spread_pod(selector: Any, when: str = "DoNotSchedule") -> dict[str, Any]:
    constraint = {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": when}
    if selector is not None:
        constraint["labelSelector"] = selector
    return make_pod(
        "web-new", labels={"app": "web"}, spec={"topologySpreadConstraints": [constraint]}
    )


def test_explanation_names_domain_count_skew_and_matching_pods() -> None:
    decision = decide(cluster(), spread_pod({"matchLabels": {"app": "web"}}))
    detail = decision.details(decision.cycle.snapshot.index["node-a"])[PLUGIN]
    (hard,) = detail["hardConstraints"]
    assert hard["domain"] == f"{ZONE}=z1"
    assert (hard["matchingPods"], hard["globalMinimum"], hard["skew"]) == (2, 1, 2)
    assert hard["matchedPods"] == ["default/web-a1", "default/web-a2"]
    assert hard["selector"] == "app=web"


def test_soft_explanation_reports_weight_and_contribution() -> None:
    decision = decide(cluster(), spread_pod({"matchLabels": {"app": "web"}}, "ScheduleAnyway"))
    detail = decision.details(decision.cycle.snapshot.index["node-c"])[PLUGIN]
    (soft,) = detail["softConstraints"]
    assert soft["domain"] == f"{ZONE}=z2"
    assert soft["matchingPods"] == 1
    assert soft["weight"] == pytest.approx(np.log(4))  # two domains
    assert soft["matchedPods"] == ["default/web-c1"]


def test_an_invalid_label_selector_is_an_error_status_naming_the_field() -> None:
    bad = {"matchExpressions": [{"key": "app", "operator": "Gt", "values": ["1"]}]}
    decision = decide(cluster(), spread_pod(bad))
    (outcome,) = decision.filters
    status = outcome.result.status(0)
    assert status.code == Code.ERROR
    assert "obtaining pod's hard topology spread constraints" in (status.message or "")
    assert "spec.topologySpreadConstraints[0].labelSelector" in (status.message or "")


def test_go_round_goes_half_away_from_zero() -> None:
    values = np.array([0.5, 1.5, 2.5, 2.4999999999999996, -0.5, 0.49999999999999994])
    assert go_round(values).tolist() == [1, 2, 3, 2, -1, 0]


# -- simulate ------------------------------------------------------------------------------------


def deployment(spread: bool) -> dict[str, Any]:
    template: dict[str, Any] = {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [make_container("app", {"cpu": 1000, "memory": GI})]},
    }
    if spread:
        template["spec"]["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}},
            }
        ]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 2, "template": template},
    }


@pytest.mark.parametrize("cache", [[], ["--no-cache"]], ids=["cached", "uncached"])
def test_simulate_counts_earlier_placements_when_spreading(
    tmp_path: Path, cache: list[str]
) -> None:
    """MostAllocated packs both replicas on the big node; a zone constraint moves the second."""
    nodes = [
        make_node("big", {"cpu": 64000, "memory": 128 * GI, "pods": 110}, labels={ZONE: "z1"}),
        make_node("small", {"cpu": 8000, "memory": 16 * GI, "pods": 110}, labels={ZONE: "z2"}),
    ]
    fit = {"scoringStrategy": {"type": "MostAllocated"}}
    no_defaults = {"name": PLUGIN, "args": {"defaultingType": "List"}}  # explicit constraints only
    config = single_profile_config({}, [{"name": "NodeResourcesFit", "args": fit}, no_defaults])
    placed = {}
    for spread in (False, True):
        result = run_cli(
            "simulate",
            "--cluster",
            str(write_json(tmp_path / "cluster.json", object_list(nodes))),
            "--config",
            str(write_json(tmp_path / "config.json", config)),
            "--workload",
            str(write_json(tmp_path / f"w{spread}.json", object_list([deployment(spread)]))),
            "--format",
            "json",
            *cache,
        )
        assert result.returncode == 0, result.stderr
        (run,) = json.loads(result.stdout)["runs"]
        placed[spread] = [p["selectedNode"] for p in run["pods"]]
    assert placed[False] == ["small", "small"]
    assert placed[True] == ["small", "big"]


def test_simulate_applies_system_default_spreading_through_the_workloads_replica_set(
    tmp_path: Path,
) -> None:
    """The Deployment's ReplicaSet joins the snapshot, so its replicas get the system default
    constraints (hostname, zone): they spread where MostAllocated alone would pack them."""
    nodes = [make_node(f"n{i}", {"cpu": 8000, "memory": 16 * GI, "pods": 110}) for i in range(2)]
    fit = {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
    spread = single_profile_config({}, [fit])
    packed = single_profile_config({"multiPoint": {"disabled": [{"name": PLUGIN}]}}, [fit])
    placed = {}
    for name, config in (("spread", spread), ("packed", packed)):
        result = run_cli(
            "simulate",
            "--cluster",
            str(write_json(tmp_path / "cluster.json", object_list(nodes))),
            "--config",
            str(write_json(tmp_path / f"{name}.json", config)),
            "--workload",
            str(write_json(tmp_path / "w.json", object_list([deployment(spread=False)]))),
            "--format",
            "json",
        )
        assert result.returncode == 0, result.stderr
        (run,) = json.loads(result.stdout)["runs"]
        placed[name] = [p["selectedNode"] for p in run["pods"]]
    assert placed["packed"] == ["n0", "n0"]
    assert placed["spread"] == ["n0", "n1"]


def test_workload_controllers_mirror_the_deployment_controller() -> None:
    workload = [deployment(spread=False)]
    (rs,) = workload_controllers(workload)
    pods = expand_workload(workload)
    owner = pods[0]["metadata"]["ownerReferences"][0]
    assert (rs["kind"], rs["metadata"]["name"]) == (owner["kind"], owner["name"])
    template_hash = pods[0]["metadata"]["labels"]["pod-template-hash"]
    assert rs["spec"]["selector"]["matchLabels"]["pod-template-hash"] == template_hash
