"""Sync jobs on a demo cluster with eager tasks: roles, the per-cluster lease, recovery of
lost or interrupted jobs, time windows, demo NodeMetric drift and pending-pod evaluation."""

from __future__ import annotations

import copy
from datetime import time, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from policy import tasks
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.decisions.models import PlacementDecision
from policy.policies.models import NodeThresholdPolicy
from policy.sync import jobs
from policy.sync.appliers import store_derived_snapshot
from policy.sync.demo import drifted_objects
from policy.sync.models import ClusterSyncState, SyncJob
from tests.sync.worker import wait_for

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("persona", "sync", "plan", "refresh", "drift", "list_"),
    [
        ("viewer", 403, 403, 403, 200, 200),
        ("editor", 403, 403, 202, 200, 200),
        ("operator", 202, 200, 202, 200, 200),
    ],
)
def test_who_may_do_what(
    api_client: Any,
    request: pytest.FixtureRequest,
    demo_snapshot: Any,
    persona: str,
    sync: int,
    plan: int,
    refresh: int,
    drift: int,
    list_: int,
) -> None:
    api_client.force_login(request.getfixturevalue(persona))
    base = f"/api/v1/clusters/{demo_snapshot.cluster_id}"
    assert api_client.post(f"{base}/sync/").status_code == sync
    assert api_client.post(f"{base}/sync/plan/").status_code == plan
    assert api_client.post(f"{base}/refresh/").status_code == refresh
    assert api_client.get(f"{base}/drift/").status_code == drift
    assert api_client.get("/api/v1/sync-jobs/").status_code == list_


def test_unknown_cluster_is_404(api_client: Any, operator: User) -> None:
    api_client.force_login(operator)
    for url in ("sync/", "sync/plan/", "refresh/"):
        assert api_client.post(f"/api/v1/clusters/999/{url}").status_code == 404
    assert api_client.get("/api/v1/clusters/999/drift/").status_code == 404


def test_sync_jobs_filter(api_client: Any, viewer: User, demo_snapshot: Any) -> None:
    cluster = demo_snapshot.cluster
    SyncJob.objects.create(cluster=cluster, kind="push", status="failed", error="boom")
    SyncJob.objects.create(cluster=cluster, kind="refresh", status="succeeded")
    api_client.force_login(viewer)
    failed = api_client.get("/api/v1/sync-jobs/?status=failed").json()["results"]
    assert [(j["kind"], j["error"]) for j in failed] == [("push", "boom")]
    assert len(api_client.get(f"/api/v1/sync-jobs/?cluster={cluster.pk}").json()["results"]) == 2
    assert api_client.get("/api/v1/sync-jobs/?kind=nope").status_code == 400


def test_two_jobs_never_hold_one_cluster(demo_snapshot: Any) -> None:
    cluster = demo_snapshot.cluster
    a = SyncJob.objects.create(cluster=cluster, kind="push")
    b = SyncJob.objects.create(cluster=cluster, kind="push")
    assert jobs.acquire_cluster(cluster, a)
    assert not jobs.acquire_cluster(cluster, b)
    with pytest.raises(jobs.RetryLater):
        jobs.run_job(b.pk, "w2")
    b.refresh_from_db()
    assert b.status == "queued" and "another push" in b.error
    jobs.release_cluster(cluster, a)
    assert jobs.run_job(b.pk, "w2") is not None
    b.refresh_from_db()
    assert b.status == "succeeded"
    # An expired lease (its worker died) can be taken over.
    assert jobs.acquire_cluster(cluster, a)
    ClusterSyncState.objects.filter(cluster=cluster).update(
        lock_expires=timezone.now() - timedelta(seconds=1)
    )
    assert jobs.acquire_cluster(cluster, b)


def test_a_job_is_claimed_once(demo_snapshot: Any) -> None:
    job = SyncJob.objects.create(cluster=demo_snapshot.cluster, kind="push")
    assert jobs.claim(job.pk, "w1") is not None
    assert jobs.claim(job.pk, "w2") is None  # running, lease alive
    SyncJob.objects.filter(pk=job.pk).update(lease_expires=timezone.now() - timedelta(seconds=1))
    taken = jobs.claim(job.pk, "w2")
    assert taken is not None and taken.attempts == 2 and taken.worker == "w2"


def test_recovery_resends_lost_and_interrupted_jobs(demo_snapshot: Any) -> None:
    cluster = demo_snapshot.cluster
    now = timezone.now()
    fresh = SyncJob.objects.create(cluster=cluster, kind="push")
    lost = SyncJob.objects.create(cluster=cluster, kind="refresh")
    SyncJob.objects.filter(pk=lost.pk).update(created=now - timedelta(minutes=5))
    dead = SyncJob.objects.create(
        cluster=cluster, kind="push", status="running", lease_expires=now - timedelta(seconds=1)
    )
    done = SyncJob.objects.create(cluster=cluster, kind="push", status="succeeded")
    sent: list[int] = []
    assert jobs.recover(send=lambda job: sent.append(job.pk)) == [lost.pk, dead.pk]
    assert sent == [lost.pk, dead.pk] and fresh.pk not in sent and done.pk not in sent
    assert jobs.recover(send=lambda job: sent.append(job.pk)) == [dead.pk]  # not lost twice


def _night_window(demo_snapshot: Any) -> tuple[str, time]:
    """A threshold policy on one node whose daily window is open now; the node and the
    window's end."""
    now = timezone.now().astimezone(timezone.get_fixed_timezone(0))
    start = (now - timedelta(minutes=5)).time().replace(second=0, microsecond=0)
    end = (now + timedelta(minutes=30)).time().replace(second=0, microsecond=0)
    node = demo_snapshot.objects[0]["metadata"]["name"]
    NodeThresholdPolicy.objects.create(
        cluster=demo_snapshot.cluster,
        name="night",
        node_names=[node],
        usage_thresholds={"cpu": 30},
        active_from=start,
        active_until=end,
    )
    return node, end


def _close_window(cluster: Any, end: time) -> None:
    NodeThresholdPolicy.objects.filter(cluster=cluster).update(
        active_from=time(0, 0) if end != time(0, 0) else time(1, 0),
        active_until=time(0, 1) if end != time(0, 1) else time(1, 1),
    )


def test_time_windows_push_only_when_the_active_set_changes(
    demo_snapshot: Any, run_on_commit: Any
) -> None:
    cluster = demo_snapshot.cluster
    cluster.push_mode = "automatic"
    cluster.save()
    node, end = _night_window(demo_snapshot)
    with run_on_commit():
        assert tasks.apply_time_windows.apply().get() == [cluster.pk]
    job = SyncJob.objects.get(trigger="time-window")
    assert job.status == "succeeded" and [c["name"] for c in job.changes] == [node]
    assert tasks.apply_time_windows.apply().get() == []  # unchanged: no push

    _close_window(cluster, end)  # the annotation goes
    with run_on_commit():
        assert tasks.apply_time_windows.apply().get() == [cluster.pk]
    last = SyncJob.objects.filter(trigger="time-window").first()
    assert last is not None and [c["action"] for c in last.changes] == ["remove"]


def test_time_windows_of_a_manual_cluster_wait_for_an_operator_push(
    demo_snapshot: Any, run_on_commit: Any
) -> None:
    cluster = demo_snapshot.cluster
    assert cluster.push_mode == "manual"
    node, end = _night_window(demo_snapshot)
    # The policy was never pushed: a timer must not push what no operator reviewed.
    assert tasks.apply_time_windows.apply().get() == []
    assert not SyncJob.objects.exists()
    with run_on_commit():
        jobs.request_push(cluster, trigger="operator")
    assert SyncJob.objects.get().status == "succeeded"

    _close_window(cluster, end)  # approved policy, its window closes: pushed
    with run_on_commit():
        assert tasks.apply_time_windows.apply().get() == [cluster.pk]
    closed = SyncJob.objects.get(trigger="time-window")
    assert [(c["name"], c["action"]) for c in closed.changes] == [(node, "remove")]

    # An edit waits for review: the next window change is not pushed with it.
    policy = NodeThresholdPolicy.objects.get(cluster=cluster)
    policy.description = "edited, not yet pushed"
    policy.save()
    NodeThresholdPolicy.objects.filter(pk=policy.pk).update(
        active_from=timezone.now().time().replace(hour=0, minute=0, second=0, microsecond=0),
        active_until=time(23, 59),
    )
    assert tasks.apply_time_windows.apply().get() == []


def test_demo_metrics_drift_but_annotations_stay(demo_snapshot: Any) -> None:
    cluster = demo_snapshot.cluster
    ids = tasks.drift_demo_metrics.apply().get()
    assert len(ids) == 1
    newer = ClusterSnapshot.snapshots.get(pk=ids[0])
    assert newer.taken_at > demo_snapshot.taken_at
    assert cluster.latest_snapshot().pk == newer.pk  # type: ignore[union-attr]

    def usage(objects: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            o["metadata"]["name"]: o["status"]["nodeMetric"]["nodeUsage"]
            for o in objects
            if o["kind"] == "NodeMetric"
        }

    assert usage(newer.objects) != usage(demo_snapshot.objects)
    assert [o for o in newer.objects if o["kind"] == "Node"] == [
        o for o in demo_snapshot.objects if o["kind"] == "Node"
    ]


def test_drift_keeps_metric_ages() -> None:
    from datetime import UTC, datetime

    taken = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    objects = [
        {
            "kind": "NodeMetric",
            "metadata": {"name": "n"},
            "status": {
                "updateTime": "2026-01-01T11:59:30Z",
                "nodeMetric": {"nodeUsage": {"resources": {"cpu": "1", "memory": "1Gi"}}},
            },
        }
    ]
    later = drifted_objects(objects, taken, taken + timedelta(minutes=1), seed=1)
    assert later[0]["status"]["updateTime"] == "2026-01-01T12:00:30Z"
    assert objects[0]["status"]["updateTime"] == "2026-01-01T11:59:30Z"


def test_pending_pods_are_evaluated_once_per_inputs(demo_snapshot: Any) -> None:
    cluster = demo_snapshot.cluster
    first = tasks.evaluate_pending.apply((cluster.pk,)).get()
    assert first["pending"] > 0 and first["evaluated"] == first["pending"]
    decisions = PlacementDecision.objects.filter(cluster=cluster, source="worker")
    assert decisions.count() == first["pending"]
    again = tasks.evaluate_pending.apply((cluster.pk,)).get()
    assert again["evaluated"] == 0 and again["unchanged"] == first["pending"]
    assert decisions.count() == first["pending"]


def test_a_new_snapshot_that_changes_nothing_for_a_pod_records_nothing(
    demo_snapshot: Any,
) -> None:
    """A refresh stores a new snapshot every minute; pending pods whose decision is the same
    are not recorded again. One whose decision changes is."""
    cluster = demo_snapshot.cluster
    first = tasks.evaluate_pending.apply((cluster.pk,)).get()
    decisions = PlacementDecision.objects.filter(cluster=cluster, source="worker")
    assert decisions.count() == first["pending"] > 0
    store_derived_snapshot(demo_snapshot, list(demo_snapshot.objects))  # same objects
    again = tasks.evaluate_pending.apply((cluster.pk,)).get()
    assert (again["evaluated"], again["unchanged"]) == (0, first["pending"])
    # Every node cordoned: each pending pod is now unschedulable, so each is recorded again.
    cordoned = copy.deepcopy(list(demo_snapshot.objects))
    for obj in cordoned:
        if obj["kind"] == "Node":
            obj["spec"]["unschedulable"] = True
    store_derived_snapshot(demo_snapshot, cordoned)
    changed = tasks.evaluate_pending.apply((cluster.pk,)).get()
    assert changed["evaluated"] == first["pending"]
    assert decisions.count() == 2 * first["pending"]
    assert set(decisions.order_by("-id")[: first["pending"]].values_list("outcome", flat=True)) == {
        "unschedulable"
    }


def test_refresh_of_a_demo_cluster_stores_a_snapshot_and_checks_drift(
    api_client: Any, editor: User, demo_snapshot: Any, run_on_commit: Any
) -> None:
    cluster = demo_snapshot.cluster
    node = demo_snapshot.objects[0]["metadata"]["name"]
    ClusterSyncState.objects.create(cluster=cluster, annotations={node: '{"usageThresholds":{}}'})
    api_client.force_login(editor)
    with run_on_commit():
        body = api_client.post(f"/api/v1/clusters/{cluster.pk}/refresh/").json()
    job = SyncJob.objects.get(pk=body["id"])
    assert job.status == "succeeded" and job.snapshot_id == cluster.latest_snapshot().pk  # type: ignore[union-attr]
    drift = api_client.get(f"/api/v1/clusters/{cluster.pk}/drift/").json()
    assert drift["drifted"] and drift["drift"][0]["name"] == node
    assert drift["drift"][0]["actual"] is None and drift["snapshot"]["age_seconds"] >= 0


def test_connected_clusters_are_refreshed_on_their_own_interval(demo_snapshot: Any) -> None:
    """The beat's task queues a refresh once a cluster's interval has passed since its last
    one; a demo cluster, one with interval 0, and one refreshed recently are left alone."""
    now = timezone.now()
    due = Cluster.objects.create(name="due", kind="in-cluster", refresh_interval_seconds=60)
    manual = Cluster.objects.create(name="manual", kind="in-cluster", refresh_interval_seconds=0)
    recent = Cluster.objects.create(name="recent", kind="in-cluster", refresh_interval_seconds=600)
    SyncJob.objects.create(cluster=recent, kind="refresh", status="succeeded")
    assert jobs.refresh_due(now) == [due.pk]
    [job] = SyncJob.objects.filter(cluster=due)
    assert (job.kind, job.trigger, job.status) == ("refresh", "schedule", "queued")
    assert jobs.refresh_due(now + timedelta(seconds=30)) == []  # queued just now
    assert jobs.refresh_due(now + timedelta(seconds=61)) == [due.pk]
    assert not SyncJob.objects.filter(cluster__in=[manual, demo_snapshot.cluster]).exists()


@pytest.mark.django_db(transaction=True)
def test_a_working_job_renews_its_lease_and_a_taken_over_one_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The heartbeat keeps a long push alive with a short lease; a worker presumed dead (its
    job re-claimed by another) stops renewing."""
    cluster = Cluster.objects.create(name="beat", kind="demo")
    ClusterSyncState.objects.create(cluster=cluster)
    stale = timezone.now() - timedelta(seconds=5)
    job = SyncJob.objects.create(
        cluster=cluster, kind="push", status="running", worker="w1", lease_expires=stale
    )
    ClusterSyncState.objects.filter(cluster=cluster).update(locked_by=job, lock_expires=stale)
    monkeypatch.setattr(jobs, "HEARTBEAT_SECONDS", 0.05)
    soon = timezone.now() + timedelta(seconds=jobs.LEASE_SECONDS - 5)

    def renewed() -> bool:  # read apart from ``job``, which the heartbeat thread uses
        lease = SyncJob.objects.get(pk=job.pk).lease_expires
        lock = ClusterSyncState.objects.get(cluster=cluster).lock_expires
        return all(until is not None and until > soon for until in (lease, lock))

    with jobs._working(job, jobs.JobLog(job)):
        wait_for(renewed, timeout=30, what="the heartbeat to renew the lease and the lock")
    SyncJob.objects.filter(pk=job.pk).update(worker="w2")  # taken over after a stall
    assert jobs.renew(job) is False
