"""InterPodAffinity beyond upstream's vectors: explanations, and placements during a simulation
changing later verdicts (existing pods' terms and the incoming pod's counts follow Reserve)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scoring.config import load_configuration
from scoring.engine import Engine
from scoring.framework import Code
from scoring.objects import parse_pod
from scoring.simulation.simulator import simulate
from scoring.snapshot import Snapshot
from tests.scoring.builders import (
    evaluate,
    make_node,
    make_pod,
    node_result,
    plugin_filter,
    plugin_score,
    single_profile_config,
)

GI = 1 << 30
PLUGIN = "InterPodAffinity"
NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)
HOST = "kubernetes.io/hostname"


def engine(args: dict[str, Any] | None = None) -> Engine:
    star = [{"name": "*"}]
    plugins = {
        point: {"disabled": star, "enabled": [{"name": PLUGIN}]}
        for point in ("preFilter", "filter", "preScore", "score")
    }
    config = [{"name": PLUGIN, "args": args}] if args is not None else []
    return Engine(load_configuration(single_profile_config(plugins, config)))


def nodes(count: int = 3) -> list[dict[str, Any]]:
    return [
        make_node(
            f"n{i}", {"cpu": 8000, "memory": 16 * GI, "pods": 110}, labels={"zone": f"z{i % 2}"}
        )
        for i in range(count)
    ]


def anti_affinity(app: str, key: str = HOST) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": key}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def replica(name: str, **spec: Any) -> dict[str, Any]:
    return make_pod(name, labels={"app": "web"}, spec=spec)


def test_existing_anti_affinity_is_explained_with_the_pods_that_block() -> None:
    guard = make_pod(
        "guard",
        node_name="n0",
        labels={"app": "db"},
        spec={"affinity": anti_affinity("web", "zone")},
    )
    snapshot = Snapshot.from_objects([*nodes(), guard], warn=lambda _: None)
    decision = engine().evaluate(parse_pod(replica("web-1")), snapshot, NOW)
    (outcome,) = decision.filters
    blocked = [snapshot.node_names[i] for i in range(3) if not outcome.result.status(i).ok]
    assert blocked == ["n0", "n2"]  # zone z0 holds the guard
    detail = decision.details(snapshot.index["n2"])[PLUGIN]
    (entry,) = detail["existingAntiAffinity"]
    assert entry["domain"] == "zone=z0"
    assert entry["pods"] == ["default/guard"]


def test_required_affinity_explains_count_and_first_pod_rule() -> None:
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"}
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    snapshot = Snapshot.from_objects(nodes(), warn=lambda _: None)
    decision = engine().evaluate(parse_pod(replica("web-1", affinity=affinity)), snapshot, NOW)
    detail = decision.details(0)[PLUGIN]
    assert detail["firstPodOfGroup"] is True  # nothing matches anywhere, the pod matches itself
    assert detail["requiredAffinityTerms"][0]["count"] == 0
    assert all(decision.filters[0].result.status(i).ok for i in range(3))


def test_simulated_replicas_with_hostname_anti_affinity_land_on_distinct_nodes() -> None:
    snapshot = Snapshot.from_objects(nodes(3), warn=lambda _: None)
    pods = [parse_pod(replica(f"web-{i}", affinity=anti_affinity("web"))) for i in range(4)]
    for use_cache in (True, False):
        run = simulate(engine(), snapshot.copy(), pods, NOW, use_cache=use_cache)
        placed = [p.node for p in run.placements]
        assert sorted(placed[:3]) == ["n0", "n1", "n2"]
        assert placed[3] is None
        assert run.placements[3].reason == (
            "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules."
        )


def test_a_removed_pod_no_longer_blocks() -> None:
    guard = make_pod(
        "guard", node_name="n0", labels={"app": "db"}, spec={"affinity": anti_affinity("web")}
    )
    snapshot = Snapshot.from_objects([*nodes(1), guard], warn=lambda _: None)
    pod = parse_pod(replica("web-1"))
    first = engine().evaluate(pod, snapshot, NOW)
    assert first.filters[0].result.status(0).code == Code.UNSCHEDULABLE
    snapshot.remove_pod(snapshot.pods_on_node[0][0])
    assert engine().evaluate(pod, snapshot, NOW).filters[0].result.status(0).ok


def test_preferred_terms_score_explanation_names_term_and_weight() -> None:
    term = {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}
    affinity = {
        "podAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 7, "podAffinityTerm": term}
            ]
        }
    }
    db = make_pod("db", node_name="n1", labels={"app": "db"})
    snapshot = Snapshot.from_objects([*nodes(), db], warn=lambda _: None)
    decision = engine().evaluate(parse_pod(replica("web-1", affinity=affinity)), snapshot, NOW)
    (scored,) = decision.scores
    assert scored.raw.tolist() == [0, 7, 0]  # n1 is zone z1 with the db pod
    assert scored.normalized.tolist() == [0, 100, 0]
    (entry,) = decision.details(1)[PLUGIN]["scoreTerms"]
    assert (entry["weight"], entry["domain"], entry["matchedPods"]) == (
        7,
        "zone=z1",
        ["default/db"],
    )


def test_the_default_profile_runs_both_plugins_at_weight_two(tmp_path: Path) -> None:
    """No --config: kube-scheduler's default profile, where both plugins score at weight 2."""
    rs = {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": "web-1", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}},
    }
    owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "controller": True}
    pod = replica("web-2", affinity=anti_affinity("db"))
    pod["metadata"]["ownerReferences"] = [owner]
    guard = make_pod("db", node_name="n0", labels={"app": "db"})
    decision = evaluate(tmp_path, [*nodes(2), guard, rs], pod)
    assert not {s["plugin"] for s in decision["skippedPlugins"]} & {PLUGIN, "PodTopologySpread"}
    n0, n1 = (node_result(decision, n) for n in ("n0", "n1"))
    assert plugin_filter(decision, "n0", PLUGIN)["reason"] == (
        "node(s) didn't match pod anti-affinity rules"
    )
    spread = plugin_score(decision, "n1", "PodTopologySpread")
    assert spread is not None and spread["weight"] == 2
    assert "PodTopologySpread" in n1["details"] and not n0["feasible"]
