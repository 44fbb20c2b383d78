"""Per-node usage-threshold annotations: schedboard writes and removes only its own."""

from __future__ import annotations

from collections.abc import Callable

from policy.clusters.gateway.apply import apply_node_annotations, plan_node_annotations
from policy.clusters.gateway.connection import Connection
from policy.clusters.gateway.desired import usage_thresholds_annotation
from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS as KEY

OURS = usage_thresholds_annotation({"usageThresholds": {"cpu": 65, "memory": 90}})
NEWER = usage_thresholds_annotation({"usageThresholds": {"cpu": 70, "memory": 90}})
THEIRS = '{"usageThresholds":{"cpu":50}}'
NEIGHBOUR = {"team.example.com/owner": "payments", "node.alpha.kubernetes.io/ttl": "0"}


def annotations(admin: Connection, name: str) -> dict[str, str]:
    node = admin.request("GET", f"/api/v1/nodes/{name}")
    return dict(node["metadata"].get("annotations") or {})


def test_adds_where_absent_and_leaves_other_annotations(
    admin: Connection, scratch_nodes: Callable[..., list[str]]
) -> None:
    a, b = scratch_nodes(2, NEIGHBOUR)
    plan = plan_node_annotations(admin, {a: OURS, b: OURS}, set())
    assert [(c.name, c.action, c.after) for c in plan] == [(a, "add", OURS), (b, "add", OURS)]
    assert plan.owned == {a, b}

    result = apply_node_annotations(admin, {a: OURS, b: OURS}, set(), plan=plan)
    assert result.applied == plan.changes and result.owned == {a, b}
    assert annotations(admin, a) == {**NEIGHBOUR, KEY: OURS}
    # Applying again changes nothing.
    assert not plan_node_annotations(admin, {a: OURS, b: OURS}, result.owned)


def test_never_touches_an_annotation_someone_else_set(
    admin: Connection, scratch_nodes: Callable[..., list[str]]
) -> None:
    [node] = scratch_nodes(1, {**NEIGHBOUR, KEY: THEIRS})
    plan = plan_node_annotations(admin, {node: OURS}, set())
    assert plan.changes == [] and plan.owned == frozenset()
    assert plan.notes == [f"node {node}: {KEY} was set by someone else; left alone"]

    result = apply_node_annotations(admin, {node: OURS}, set())
    assert result.applied == [] and result.owned == frozenset()
    assert annotations(admin, node)[KEY] == THEIRS
    # Not targeted any more: still not ours to remove.
    apply_node_annotations(admin, {}, set())
    assert annotations(admin, node)[KEY] == THEIRS


def test_updates_and_removes_only_owned_annotations(
    admin: Connection, scratch_nodes: Callable[..., list[str]]
) -> None:
    kept, dropped, foreign = scratch_nodes(3, NEIGHBOUR)
    first = apply_node_annotations(admin, {kept: OURS, dropped: OURS}, set())
    admin.request(
        "PATCH",
        f"/api/v1/nodes/{foreign}",
        body={"metadata": {"annotations": {KEY: THEIRS}}},
        content_type="application/merge-patch+json",
    )

    plan = plan_node_annotations(admin, {kept: NEWER}, first.owned)
    assert sorted((c.name, c.action) for c in plan) == sorted(
        [(dropped, "remove"), (kept, "update")]
    )
    change = {c.name: c for c in plan}[kept]
    assert '-    "cpu": 65,' in change.diff and '+    "cpu": 70,' in change.diff

    result = apply_node_annotations(admin, {kept: NEWER}, first.owned, plan=plan)
    assert result.applied == plan.changes
    assert result.owned == {kept}
    assert annotations(admin, kept) == {**NEIGHBOUR, KEY: NEWER}
    assert annotations(admin, dropped) == NEIGHBOUR
    assert annotations(admin, foreign) == {**NEIGHBOUR, KEY: THEIRS}


def test_none_means_remove_if_owned(
    admin: Connection, scratch_nodes: Callable[..., list[str]]
) -> None:
    node, other = scratch_nodes(2)
    owned = apply_node_annotations(admin, {node: OURS}, set()).owned
    assert owned is not None
    result = apply_node_annotations(admin, {node: None, other: None}, owned)
    assert [(c.name, c.action) for c in result.applied] == [(node, "remove")]
    assert result.owned == frozenset()
    assert KEY not in annotations(admin, node)


def test_nodes_that_disappeared_are_forgotten(
    admin: Connection, scratch_nodes: Callable[..., list[str]]
) -> None:
    [node] = scratch_nodes(1)
    plan = plan_node_annotations(admin, {node: OURS, "gone-node": OURS}, {"gone-node", "also-gone"})
    assert [c.name for c in plan] == [node]
    assert plan.owned == {node}
    assert plan.notes == ["node gone-node no longer exists"]


def test_a_node_deleted_between_plan_and_apply_is_skipped(
    admin: Connection, scratch_nodes: Callable[..., list[str]]
) -> None:
    node, kept = scratch_nodes(2)
    plan = plan_node_annotations(admin, {node: OURS, kept: OURS}, set())
    admin.request("DELETE", f"/api/v1/nodes/{node}")
    result = apply_node_annotations(admin, {node: OURS, kept: OURS}, set(), plan=plan)
    assert [c.name for c in result.applied] == [kept]
    assert result.owned == {kept}
