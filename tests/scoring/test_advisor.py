"""Fixes for unschedulable pods (scoring.advisor): every listed fix is re-checked here by
applying it and evaluating again, independently of the advisor's own check."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from scoring.advisor import MAX_FIXES, advise, apply_merge_patch
from scoring.config import load_configuration
from scoring.engine import Engine
from scoring.objects import parse_pod
from scoring.snapshot import Snapshot
from scoring.timeutil import parse_time
from tests.scoring.builders import make_container, make_node, make_pod
from tests.scoring.loadaware_vectors import NOW, node_metric

GI = 1 << 30


def loadaware_config(args: Mapping[str, Any]) -> dict[str, Any]:
    """The default profile plus LoadAwareScheduling with ``args``."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]}},
                "pluginConfig": [{"name": "LoadAwareScheduling", "args": dict(args)}],
            }
        ],
    }


CONFIG = loadaware_config({"usageThresholds": {"cpu": 65}})
TAINT = {"key": "dedicated", "value": "batch", "effect": "NoSchedule"}


def node(name: str, cpu: int = 8000, **kwargs: Any) -> dict[str, Any]:
    return make_node(name, {"cpu": cpu, "memory": 16 * GI, "pods": 110}, **kwargs)


def metric(name: str, cpu_used: int) -> dict[str, Any]:
    return node_metric(
        {"node": name, "update_age_seconds": 10, "node_usage": {"cpu": cpu_used, "memory": GI}}
    )


def pending(name: str, cpu: int = 500, **spec: Any) -> dict[str, Any]:
    return make_pod(name, containers=[make_container("app", {"cpu": cpu, "memory": GI})], spec=spec)


# A koord-free pod adds no estimate to a node's usage: the node's own usage decides.
IDLE = make_pod("idle", labels={"koordinator.sh/priority-class": "koord-free"})


def bound(name: str, on: str, cpu: int) -> dict[str, Any]:
    return make_pod(name, node_name=on, containers=[make_container("app", {"cpu": cpu})])


def fixes_for(
    objects: Sequence[Mapping[str, Any]], pod: Mapping[str, Any], config: Any = CONFIG
) -> tuple[list[dict[str, Any]], Engine, Snapshot]:
    engine = Engine(load_configuration(config))
    snapshot = Snapshot.from_objects([*objects, pod], warn=lambda _: None)
    decision = engine.evaluate(parse_pod(pod), snapshot, parse_time(NOW))
    fixes = [f.to_dict() for f in advise(engine, decision)]
    for fix in fixes:
        assert placed_with(fix, engine, snapshot, pod), fix
    return fixes, engine, snapshot


def placed_with(
    fix: Mapping[str, Any], engine: Engine, snapshot: Snapshot, pod: Mapping[str, Any]
) -> bool:
    """Apply a listed fix the way a user would and evaluate again."""
    now = parse_time(NOW)
    if fix["target"] == "pod":
        changed = parse_pod(apply_merge_patch(pod, fix["patch"]))
        return engine.evaluate(changed, snapshot, now).selected_node in fix["nodes"]
    if fix["target"] == "policy":
        patch = fix["patch"]
        field, resource = patch["field"].rsplit(".", 1)
        assert field == "usageThresholds"
        args = {field: {resource: patch["value"]}}
        changed_engine = Engine(load_configuration(loadaware_config(args)))
        return (
            changed_engine.evaluate(parse_pod(pod), snapshot.copy(), now).selected_node
            in fix["nodes"]
        )
    fresh = snapshot.copy()
    for name, node_patch in fix["patch"].items():
        fresh.update_node(apply_merge_patch(fresh.nodes[fresh.index[name]].raw, node_patch))
    for name, keys in fix.get("evict", {}).items():
        home = fresh.index[name]
        for other in [p for p in fresh.pods_on_node[home] if p.key in keys]:
            fresh.forget_pod(other, home)
    return engine.evaluate(parse_pod(pod), fresh, now).selected_node is not None


def kinds(fixes: list[dict[str, Any]]) -> list[str]:
    return [f["kind"] for f in fixes]


def test_a_scheduled_pod_has_no_fixes() -> None:
    fixes, _, _ = fixes_for([node("n1"), metric("n1", 1000)], pending("web"))
    assert fixes == []


def test_a_request_no_node_has_room_for() -> None:
    cluster = [node("n1"), node("n2"), bound("a", "n1", 6000), bound("b", "n2", 7000)]
    fixes, _, _ = fixes_for(cluster, pending("big", cpu=3000))
    assert "lower-request" in kinds(fixes)[:3]
    lower = next(f for f in fixes if f["kind"] == "lower-request")
    # the highest request that fits: n1 has 2000m free
    requests = lower["patch"]["spec"]["containers"][0]["resources"]["requests"]
    assert requests["cpu"] == "2"
    assert lower["nodes"] == ["n1"]
    capacity = next(f for f in fixes if f["kind"] == "free-capacity")
    assert capacity["evict"] == {"n1": ["default/a"]}
    assert capacity["patch"] == {}


def test_an_untolerated_taint() -> None:
    cluster = [node("n1", taints=[TAINT]), node("n2", taints=[TAINT]), pending("other")]
    fixes, _, _ = fixes_for(cluster, pending("web"))
    assert "add-toleration" in kinds(fixes)[:3]
    tolerate = next(f for f in fixes if f["kind"] == "add-toleration")
    assert tolerate["patch"] == {"spec": {"tolerations": [{**TAINT, "operator": "Equal"}]}}
    assert sorted(tolerate["nodes"]) == ["n1", "n2"]
    untaint = next(f for f in fixes if f["kind"] == "untaint-node")
    assert untaint["patch"] == {"n1": {"spec": {"taints": None}}}
    assert untaint["unblocks"] == 1  # "other" is kept off by the same taint


def test_a_node_selector_no_node_matches() -> None:
    cluster = [node("n1", labels={"accelerator": "nvidia-t4"}), node("n2")]
    fixes, _, _ = fixes_for(cluster, pending("train", nodeSelector={"accelerator": "nvidia-a100"}))
    assert "relax-node-selector" in kinds(fixes)[:3]
    relax = next(f for f in fixes if f["kind"] == "relax-node-selector")
    assert relax["patch"] == {"spec": {"nodeSelector": {"accelerator": None}}}
    label = next(f for f in fixes if f["kind"] == "label-node")
    assert list(label["patch"].values()) == [
        {"metadata": {"labels": {"accelerator": "nvidia-a100"}}}
    ]
    assert label["unblocks"] == 0


def test_a_loadaware_threshold() -> None:
    # 8 cores: 6.1 cores used is 76 %, 7 cores 88 %, both over 65 %
    cluster = [node("n1"), node("n2"), metric("n1", 6100), metric("n2", 7000)]
    fixes, _, _ = fixes_for(cluster, IDLE)
    assert "loadaware-threshold" in kinds(fixes)[:3]
    threshold = next(f for f in fixes if f["kind"] == "loadaware-threshold")
    assert threshold["patch"] == {
        "profile": "default-scheduler",
        "plugin": "LoadAwareScheduling",
        "field": "usageThresholds.cpu",
        "current": 65,
        "value": 76,
    }
    assert threshold["nodes"] == ["n1"]


def test_a_threshold_one_lower_does_not_place_the_pod() -> None:
    cluster = [node("n1"), metric("n1", 6100)]
    fixes, engine, snapshot = fixes_for(cluster, IDLE)
    threshold = next(f for f in fixes if f["kind"] == "loadaware-threshold")
    lower = {**threshold, "patch": {**threshold["patch"], "value": threshold["patch"]["value"] - 1}}
    assert not placed_with(lower, engine, snapshot, IDLE)


def test_the_threshold_what_if_leaves_no_state_on_the_snapshot() -> None:
    cluster = [node("n1"), metric("n1", 6100)]
    engine = Engine(load_configuration(CONFIG))
    snapshot = Snapshot.from_objects(cluster, warn=lambda _: None)
    decision = engine.evaluate(parse_pod(IDLE), snapshot, parse_time(NOW))
    before = set(snapshot._extensions)
    assert advise(engine, decision)
    assert set(snapshot._extensions) == before


def test_required_node_affinity_and_pod_anti_affinity() -> None:
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z9"]}]}
                ]
            }
        }
    }
    cluster = [node("n1", labels={"zone": "z1"})]
    fixes, _, _ = fixes_for(cluster, pending("web", affinity=affinity))
    assert kinds(fixes)[:1] == ["relax-node-affinity"]
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}
            ]
        }
    }
    db = make_pod("db", node_name="n1", labels={"app": "db"})
    fixes, _, _ = fixes_for([*cluster, db], pending("web", affinity=anti))
    assert "relax-pod-affinity" in kinds(fixes)


def test_topology_spread() -> None:
    constraint = {
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    cluster = [
        node("n1", labels={"zone": "z1"}),
        node("n2", labels={"zone": "z2"}, taints=[TAINT]),
        make_pod("w1", node_name="n1", labels={"app": "web"}),
    ]
    pod = make_pod(
        "web",
        labels={"app": "web"},
        containers=[make_container("app", {"cpu": 100})],
        spec={"topologySpreadConstraints": [constraint]},
    )
    fixes, _, _ = fixes_for(cluster, pod)
    spread = next(f for f in fixes if f["kind"] == "relax-topology-spread")
    assert spread["patch"]["spec"]["topologySpreadConstraints"][0]["maxSkew"] == 2


def test_at_most_ten_smallest_first() -> None:
    cluster = [node(f"n{i}", taints=[TAINT], labels={"accelerator": "t4"}) for i in range(12)]
    pod = pending("web", cpu=9000, nodeSelector={"accelerator": "a100", "disk": "ssd"})
    engine = Engine(load_configuration(CONFIG))
    snapshot = Snapshot.from_objects([*cluster, pod], warn=lambda _: None)
    decision = engine.evaluate(parse_pod(pod), snapshot, parse_time(NOW))
    fixes = advise(engine, decision)
    assert len(fixes) <= MAX_FIXES
    by_kind: dict[str, list[Any]] = {}
    for fix in fixes:
        by_kind.setdefault(fix.kind, []).append(fix.candidate.cost)
    assert all(costs == sorted(costs) for costs in by_kind.values())
    # each way out at its smallest first, then the next option of each
    firsts = len(by_kind)
    assert len({f.kind for f in fixes[:firsts]}) == firsts


@pytest.mark.parametrize(
    ("target", "patch", "expected"),
    [  # RFC 7386 appendix A
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        (["a", "b"], ["c", "d"], ["c", "d"]),
        ({"a": "b"}, ["c"], ["c"]),
        ({"a": "foo"}, None, None),
        ({"a": "foo"}, "bar", "bar"),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ],
)
def test_merge_patch_follows_rfc_7386(target: Any, patch: Any, expected: Any) -> None:
    assert apply_merge_patch(target, patch) == expected


def test_node_fixes_leave_the_snapshot_as_it_was() -> None:
    cluster = [node("n1", taints=[TAINT]), node("n2"), bound("a", "n2", 7800)]
    pod = pending("web", cpu=1000)
    engine = Engine(load_configuration(CONFIG))
    snapshot = Snapshot.from_objects([*cluster, pod], warn=lambda _: None)
    before = engine.evaluate(parse_pod(pod), snapshot, parse_time(NOW)).to_dict()
    fixes = advise(engine, engine.evaluate(parse_pod(pod), snapshot, parse_time(NOW)))
    assert {"untaint-node", "free-capacity"} <= set(kinds([f.to_dict() for f in fixes]))
    assert engine.evaluate(parse_pod(pod), snapshot, parse_time(NOW)).to_dict() == before
    assert [p.key for p in snapshot.pods_on_node[1]] == ["default/a"]


def test_a_variant_sees_its_changes_and_shares_nothing_it_changes() -> None:
    snapshot = Snapshot.from_objects(
        [node("n1"), node("n2"), bound("a", "n2", 3000)], warn=lambda _: None
    )
    relabelled = node("n1", labels={"disk": "ssd"})
    a = snapshot.pods_on_node[1][0]
    variant = snapshot.variant([relabelled], [(a, 1)])
    assert variant.nodes[0].labels["disk"] == "ssd"
    assert "disk" not in snapshot.nodes[0].labels
    cpu = snapshot.resource_index["cpu"]
    assert (variant.requested[1, cpu], snapshot.requested[1, cpu]) == (0, 3000)
    assert variant.pods_on_node[1] == [] and snapshot.pods_on_node[1] == [a]
    assert variant.label_column("disk").codes.tolist() == [0, -1]
    assert snapshot.label_column("disk").codes.tolist() == [-1, -1]


def test_a_threshold_what_if_shares_state_and_decides_as_a_fresh_build() -> None:
    cluster = [node(f"n{i}") for i in range(4)]
    cluster += [metric(f"n{i}", 5000 + 400 * i) for i in range(4)]
    cluster += [bound(f"p{i}", f"n{i}", 1000) for i in range(4)]
    pod = pending("web", cpu=700)
    raised = Engine(load_configuration(loadaware_config({"usageThresholds": {"cpu": 80}})))
    fresh = Snapshot.from_objects(cluster, warn=lambda _: None)
    expected = raised.evaluate(parse_pod(pod), fresh, parse_time(NOW)).to_dict()
    shared = Snapshot.from_objects(cluster, warn=lambda _: None)
    base = Engine(load_configuration(CONFIG))
    decision = base.evaluate(parse_pod(pod), shared, parse_time(NOW))
    framework = raised.framework_for(parse_pod(pod))
    with shared.transient_extensions():
        changed = framework.instances["LoadAwareScheduling"]
        changed.share_state(decision.cycle, decision.plugins["LoadAwareScheduling"])  # type: ignore[attr-defined]
        assert framework.evaluate(parse_pod(pod), shared, parse_time(NOW)).to_dict() == expected


def test_a_re_annotated_variant_decides_as_a_fresh_build_and_leaves_the_snapshot() -> None:
    """LoadAware's state is shared by variants, but a replaced node's usage-thresholds
    annotation is read again: the variant decides as a snapshot built with it."""
    key = "scheduling.koordinator.sh/usage-thresholds"
    cluster = [node(f"n{i}") for i in range(3)]
    cluster += [metric(f"n{i}", 6000) for i in range(3)]  # 75 % cpu: over the 65 % default
    pod = pending("web", cpu=100)
    engine = Engine(load_configuration(CONFIG))
    annotated = node("n1", annotations={key: '{"usageThresholds": {"cpu": 90}}'})
    fresh = Snapshot.from_objects([cluster[0], annotated, *cluster[2:]], warn=lambda _: None)
    expected = engine.evaluate(parse_pod(pod), fresh, parse_time(NOW)).to_dict()
    assert expected["selectedNode"] == "n1"
    snapshot = Snapshot.from_objects(cluster, warn=lambda _: None)
    before = engine.evaluate(parse_pod(pod), snapshot, parse_time(NOW)).to_dict()
    assert before["selectedNode"] is None  # every node over the threshold
    variant = snapshot.variant([annotated])
    got = engine.evaluate(parse_pod(pod), variant, parse_time(NOW)).to_dict()
    assert got["selectedNode"] == "n1"
    assert got["nodes"] == expected["nodes"]
    again = engine.evaluate(parse_pod(pod), snapshot, parse_time(NOW)).to_dict()
    assert again == before  # the snapshot's own state is untouched


def test_labels_the_kubelet_sets_are_not_proposed() -> None:
    pod = pending("web", nodeSelector={"kubernetes.io/hostname": "n9"})
    fixes, _, _ = fixes_for([node("n1"), node("n2")], pod)
    assert "label-node" not in kinds(fixes)
    assert kinds(fixes)[:1] == ["relax-node-selector"]


def test_a_threshold_sweep_is_monotonic_and_counts_what_the_filter_refuses() -> None:
    from scoring.advisor import loadaware_sweep

    cluster = [node(f"n{i}", labels={"pool": "a" if i < 3 else "b"}) for i in range(6)]
    cluster += [metric(f"n{i}", 4000 + 600 * i) for i in range(6)]  # 50 % .. 88 %
    cluster += [pending("w1", cpu=200), pending("w2", cpu=200)]
    engine = Engine(load_configuration(CONFIG))
    snapshot = Snapshot.from_objects(cluster, warn=lambda _: None)
    pools = [n.labels["pool"] for n in snapshot.nodes]
    thresholds = list(range(40, 101, 10))
    rows = loadaware_sweep(
        engine, "default-scheduler", snapshot, parse_time(NOW), "cpu", thresholds, pools
    )
    filtered = [r.filtered for r in rows]
    assert filtered == sorted(filtered, reverse=True)
    usage = [50, 58, 65, 73, 80, 88]  # percent of 8 cores, rounded as the filter rounds
    assert filtered == [sum(u > t for u in usage) for t in thresholds]
    assert rows[0].by_pool == {"a": 3, "b": 3} and rows[-1].by_pool == {"a": 0, "b": 0}
    # a 200m pod adds 170m (85 % scaling) to the idlest node: (4000 + 170) / 8000 = 52 %
    assert [r.pending_placeable for r in rows] == [0, 0, 2, 2, 2, 2, 2]
