"""A node carrying someone else's usage-threshold annotation reads the same everywhere: the
node page, the policy page, the dashboard, the API and the dry-run all say its annotation
governs, that schedboard would write the policy's value, and that a push leaves it alone."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.clusters.models import ClusterSnapshot
from policy.policies.models import NodeThresholdPolicy
from policy.sync import services as sync_services
from policy.sync.thresholds_in_force import node_in_force, thresholds_in_force
from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS as KEY

pytestmark = pytest.mark.django_db


def carried(cluster_id: int) -> dict[str, str | None]:
    latest = ClusterSnapshot.snapshots.filter(cluster_id=cluster_id).first()
    assert latest is not None
    return {
        obj["metadata"]["name"]: (obj["metadata"].get("annotations") or {}).get(KEY)
        for obj in latest.objects
        if obj["kind"] == "Node"
    }


@pytest.fixture
def foreign_node(demo_snapshot: Any) -> tuple[str, str]:
    """(node, its annotation): the demo cluster has nodes annotated outside schedboard."""
    annotated = sorted((n, v) for n, v in carried(demo_snapshot.cluster_id).items() if v)
    assert annotated, "the demo cluster should carry someone else's annotation"
    return annotated[0]


@pytest.fixture
def pool(demo_snapshot: Any, foreign_node: tuple[str, str]) -> NodeThresholdPolicy:
    """A policy targeting the foreign node and two plain ones."""
    plain = sorted(n for n, v in carried(demo_snapshot.cluster_id).items() if not v)[:2]
    return NodeThresholdPolicy.objects.create(
        cluster_id=demo_snapshot.cluster_id,
        name="memory-pool",
        node_names=[foreign_node[0], *plain],
        usage_thresholds={"cpu": 80, "memory": 85},
    )


def desired_value(policy: NodeThresholdPolicy) -> str:
    return json.dumps({"usageThresholds": policy.usage_thresholds}, separators=(",", ":"))


def test_the_decision_for_a_foreign_annotation(
    pool: NodeThresholdPolicy, foreign_node: tuple[str, str]
) -> None:
    name, value = foreign_node
    _, _, rows = thresholds_in_force(pool.cluster)
    by_node = {row.node: row for row in rows}
    row = by_node[name]
    assert (row.current, row.owned, row.action, row.foreign) == (value, False, "leave", True)
    assert row.policy == pool and row.desired is not None
    assert json.loads(row.desired) == {"usageThresholds": {"cpu": 80, "memory": 85}}
    assert row.governed_by == "an annotation set outside schedboard"
    assert "a push leaves it alone" in row.reason and "memory-pool" in row.reason
    plain = [by_node[n] for n in pool.node_names if n != name]
    assert {(r.current, r.action) for r in plain} == {(None, "write")}
    assert all(r.governed_by == "the LoadAware args (no annotation)" for r in plain)


def test_the_dry_run_acts_as_the_decision_says(
    pool: NodeThresholdPolicy, foreign_node: tuple[str, str], run_on_commit: Any
) -> None:
    plan = sync_services.plan(pool.cluster)
    written = {change["name"] for change in plan.changes}
    _, _, rows = thresholds_in_force(pool.cluster)
    assert written == {row.node for row in rows if row.push_writes}
    assert foreign_node[0] not in written
    assert any(foreign_node[0] in note and "left alone" in note for note in plan.notes)

    # Once pushed, the plain nodes are schedboard's and in force; the foreign one is unchanged.
    with run_on_commit():
        sync_services.push(pool.cluster, confirmed=plan.changes)
    after = {row.node: row for row in thresholds_in_force(pool.cluster)[2]}
    assert after[foreign_node[0]].action == "leave"
    assert after[foreign_node[0]].current == foreign_node[1]
    for name in written:
        assert (after[name].owned, after[name].action) == (True, "keep")
        assert after[name].reason == "in force, as written by schedboard (memory-pool)"
        assert after[name].governed_by == "schedboard's annotation"


def test_pages_and_api_say_the_same(
    client: Any,
    api_client: Any,
    viewer: User,
    pool: NodeThresholdPolicy,
    foreign_node: tuple[str, str],
) -> None:
    name, value = foreign_node
    cluster = pool.cluster
    stored = cluster.latest_snapshot()
    assert stored is not None
    row = node_in_force(cluster, stored, name)
    assert row is not None and row.action == "leave"
    client.force_login(viewer)

    node_page = client.get(f"/clusters/{cluster.pk}/nodes/{name}/").content.decode()
    assert 'data-in-force="leave"' in node_page
    assert "an annotation set outside schedboard" in node_page
    assert "a push leaves it alone" in node_page
    assert "set by" not in node_page  # the old claim that memory-pool set it

    policy_page = client.get(f"/policies/thresholds/{pool.pk}/").content.decode()
    assert 'data-action="leave"' in policy_page
    assert f'/clusters/{cluster.pk}/nodes/{name}/"' in policy_page
    leave_row = policy_page.split('data-action="leave"')[1].split("</tr>")[0]
    assert "set outside schedboard" in leave_row and "memory-pool" in leave_row

    dashboard = client.get(f"/?cluster={cluster.pk}&q={name}").content.decode()
    node_row = dashboard.split(f"/nodes/{name}/")[1].split("</tr>")[0]
    assert "annotation" in node_row and "set outside schedboard" in node_row

    api_client.force_login(viewer)
    body = api_client.get(f"/api/v1/clusters/{cluster.pk}/node-thresholds/render/").json()
    api_row = next(n for n in body["nodes"] if n["node"] == name)
    assert api_row["current"] == value and api_row["owned"] is False
    assert api_row["push"] == "leave" and api_row["reason"] == row.reason
    assert api_row["value"] == desired_value(pool)
