"""Pushes to a demo cluster: the annotations land on the stored snapshot's Node objects, so
the engine and the node-threshold render see them; dry-runs write nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from policy.clusters.models import ClusterSnapshot
from policy.policies.models import NodeThresholdPolicy
from policy.sync.models import ClusterSyncState, SyncJob, SyncJobKind, SyncJobStatus
from scoring.plugins.loadaware.thresholds import ANNOTATION_USAGE_THRESHOLDS as KEY

pytestmark = pytest.mark.django_db


def node_annotations(cluster_id: int) -> dict[str, str | None]:
    latest = ClusterSnapshot.snapshots.filter(cluster_id=cluster_id).first()
    assert latest is not None
    return {
        obj["metadata"]["name"]: (obj["metadata"].get("annotations") or {}).get(KEY)
        for obj in latest.objects
        if obj["kind"] == "Node"
    }


@pytest.fixture
def policy(demo_snapshot: Any) -> NodeThresholdPolicy:
    nodes = sorted(node_annotations(demo_snapshot.cluster_id))[:3]
    return NodeThresholdPolicy.objects.create(
        cluster_id=demo_snapshot.cluster_id,
        name="hot-pool",
        node_names=nodes,
        usage_thresholds={"cpu": 55, "memory": 80},
    )


def test_push_writes_the_annotations_on_the_snapshot_nodes(
    api_client: Any, operator: User, policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    before = node_annotations(policy.cluster_id)
    foreign = {n: v for n, v in before.items() if v}  # the demo has someone else's annotation
    assert foreign and not set(foreign) & set(policy.node_names)
    api_client.force_login(operator)
    with run_on_commit():
        response = api_client.post(f"/api/v1/clusters/{policy.cluster_id}/sync/")
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["kind"] == "push" and body["status"] == "queued"

    job = SyncJob.objects.get(pk=body["id"])
    assert job.status == SyncJobStatus.SUCCEEDED, job.log
    assert job.requested_by == operator and job.attempts == 1
    assert job.started and job.finished and job.finished >= job.started
    assert [c["name"] for c in job.changes] == sorted(policy.node_names)
    assert {c["action"] for c in job.changes} == {"add"}

    annotations = node_annotations(policy.cluster_id)
    want = json.dumps({"usageThresholds": {"cpu": 55, "memory": 80}}, separators=(",", ":"))
    ours = dict.fromkeys(policy.node_names, want)
    assert {n: v for n, v in annotations.items() if v} == {**foreign, **ours}
    state = ClusterSyncState.objects.get(cluster_id=policy.cluster_id)
    assert state.owned_nodes == sorted(policy.node_names)
    assert state.last_push == job and state.locked_by is None

    render = api_client.get(f"/api/v1/clusters/{policy.cluster_id}/node-thresholds/render/").json()
    rendered = {row["node"]: row["value"] for row in render["nodes"] if row["value"]}
    assert rendered == ours

    # A second push has nothing to do.
    with run_on_commit():
        again = api_client.post(f"/api/v1/clusters/{policy.cluster_id}/sync/").json()
    assert SyncJob.objects.get(pk=again["id"]).changes == []


def test_removing_the_policy_removes_only_owned_annotations(
    api_client: Any, operator: User, policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    foreign = {n: v for n, v in node_annotations(policy.cluster_id).items() if v}
    api_client.force_login(operator)
    with run_on_commit():
        api_client.post(f"/api/v1/clusters/{policy.cluster_id}/sync/")
    policy.delete()
    with run_on_commit():
        body = api_client.post(f"/api/v1/clusters/{policy.cluster_id}/sync/").json()
    job = SyncJob.objects.get(pk=body["id"])
    assert {c["action"] for c in job.changes} == {"remove"}
    assert set(node_annotations(policy.cluster_id).values()) == set(foreign.values()) | {None}
    assert ClusterSyncState.objects.get(cluster_id=policy.cluster_id).owned_nodes == []


def test_dry_run_lists_the_changes_and_writes_nothing(
    api_client: Any, operator: User, policy: NodeThresholdPolicy
) -> None:
    foreign = {n: v for n, v in node_annotations(policy.cluster_id).items() if v}
    api_client.force_login(operator)
    snapshots = ClusterSnapshot.snapshots.count()
    response = api_client.post(f"/api/v1/clusters/{policy.cluster_id}/sync/plan/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["kind"] == SyncJobKind.DRY_RUN and body["status"] == "succeeded"
    assert [c["name"] for c in body["changes"]] == sorted(policy.node_names)
    assert all(c["before"] is None and "+" in c["diff"] for c in body["changes"])
    # One way to ask for a dry-run: the retired ?dry_run=1 is refused, never taken as a push.
    response = api_client.post(f"/api/v1/clusters/{policy.cluster_id}/sync/?dry_run=1")
    assert response.status_code == 400
    assert "sync/plan/" in response.json()["dry_run"][0]
    assert not SyncJob.objects.filter(kind=SyncJobKind.PUSH).exists()
    assert ClusterSnapshot.snapshots.count() == snapshots
    assert {n: v for n, v in node_annotations(policy.cluster_id).items() if v} == foreign
    state = ClusterSyncState.objects.get(cluster_id=policy.cluster_id)
    assert state.owned_nodes == [] and state.last_push is None


def test_a_waiting_push_is_reused(
    api_client: Any, operator: User, policy: NodeThresholdPolicy
) -> None:
    api_client.force_login(operator)
    first = api_client.post(f"/api/v1/clusters/{policy.cluster_id}/sync/").json()
    second = api_client.post(f"/api/v1/clusters/{policy.cluster_id}/sync/").json()
    assert first["id"] == second["id"]
    assert SyncJob.objects.filter(kind="push").count() == 1


def test_automatic_clusters_push_on_every_policy_change(
    api_client: Any, editor: User, policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    policy.cluster.push_mode = "automatic"
    policy.cluster.save()
    api_client.force_login(editor)
    url = f"/api/v1/node-threshold-policies/{policy.pk}/"
    with run_on_commit():
        response = api_client.patch(
            url, {"usage_thresholds": {"cpu": 42}}, format="json", HTTP_IF_MATCH=policy.etag
        )
    assert response.status_code == 200, response.content
    job = SyncJob.objects.get(kind="push")
    assert job.trigger == "automatic" and job.status == "succeeded", job.log
    values = node_annotations(policy.cluster_id)
    assert {values[n] for n in policy.node_names} == {'{"usageThresholds":{"cpu":42}}'}


def test_manual_clusters_do_not_push_on_change(
    api_client: Any, editor: User, policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    api_client.force_login(editor)
    with run_on_commit():
        api_client.patch(
            f"/api/v1/node-threshold-policies/{policy.pk}/",
            {"usage_thresholds": {"cpu": 42}},
            format="json",
            HTTP_IF_MATCH=policy.etag,
        )
    assert not SyncJob.objects.exists()


def test_a_confirmed_push_writes_only_what_was_confirmed(
    policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    from policy.sync import jobs
    from policy.sync import services as sync_services

    cluster = policy.cluster
    reviewed = sync_services.plan(cluster)
    assert reviewed.changes  # three annotations to add
    job = sync_services.push(cluster, confirmed=reviewed.changes)  # queued, not sent yet
    # Someone edits the policy before a worker takes the job.
    policy.usage_thresholds = {"cpu": 40, "memory": 80}
    policy.save()
    before = node_annotations(cluster.pk)
    jobs.run_job(job.pk, "w")
    job.refresh_from_db()
    assert job.status == SyncJobStatus.FAILED and job.changes == []
    assert job.error.startswith("not pushed: 3 change(s) were not in the confirmed plan (add Node")
    assert node_annotations(cluster.pk) == before  # nothing written
    assert ClusterSyncState.objects.get(cluster=cluster).last_push is None

    # Confirming the new plan pushes it; an unconfirmed push is never merged into it.
    fresh = sync_services.plan(cluster)
    with run_on_commit():
        confirmed = sync_services.push(cluster, confirmed=fresh.changes)
    confirmed.refresh_from_db()
    assert confirmed.status == SyncJobStatus.SUCCEEDED, confirmed.log
    written = node_annotations(cluster.pk)
    assert {n: json.loads(written[n] or "{}") for n in policy.node_names} == {
        n: {"usageThresholds": {"cpu": 40, "memory": 80}} for n in policy.node_names
    }


def test_the_api_pushes_exactly_a_reviewed_plan(
    api_client: Any, operator: User, policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    api_client.force_login(operator)
    base = f"/api/v1/clusters/{policy.cluster_id}"
    assert api_client.post(f"{base}/sync/", {"plan": 999}, format="json").json()["plan"] == [
        "no succeeded dry-run 999 of cluster demo"
    ]
    plan = api_client.post(f"{base}/sync/plan/").json()
    NodeThresholdPolicy.objects.filter(pk=policy.pk).update(usage_thresholds={"cpu": 41})
    # Confirming a stale plan pushes nothing and answers the new plan for review, as the page.
    with run_on_commit():
        stale = api_client.post(f"{base}/sync/", {"plan": plan["id"]}, format="json")
    assert stale.status_code == 409, stale.content
    assert stale.json()["detail"].startswith("not pushed: the changes differ")
    plan = stale.json()["plan"]
    assert plan["kind"] == SyncJobKind.DRY_RUN and '"cpu":41' in plan["changes"][0]["after"]
    assert not SyncJob.objects.filter(kind=SyncJobKind.PUSH).exists()

    with run_on_commit():
        done = api_client.post(f"{base}/sync/", {"plan": plan["id"]}, format="json").json()
    job = SyncJob.objects.get(pk=done["id"])
    assert job.status == SyncJobStatus.SUCCEEDED, job.log
    assert [c["name"] for c in job.changes] == [c["name"] for c in plan["changes"]]
