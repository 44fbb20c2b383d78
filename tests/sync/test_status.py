"""Sync status from the rows kept anyway: never pushed, queued, synced by a push or by an empty
dry-run, pending again after a change, failed with the push's error, and the cluster's own
status counting deletions; the queries stay the same whatever the number of policies."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from policy.accounts.changes import ChangeContext
from policy.policies import services as policies
from policy.policies.models import NodeThresholdPolicy
from policy.sync import services as sync_services
from policy.sync.models import SyncJob, SyncJobKind, SyncJobStatus
from policy.sync.status import FAILED, PENDING, SYNCED, for_cluster

pytestmark = pytest.mark.django_db

SYSTEM = ChangeContext.system()
THRESHOLDS = policies.NodeThresholdPolicyService()


@pytest.fixture
def policy(demo_snapshot: Any) -> NodeThresholdPolicy:
    return THRESHOLDS.create(
        {
            "cluster": demo_snapshot.cluster,
            "name": "hot-pool",
            "node_selector": {},
            "usage_thresholds": {"cpu": 55},
        },
        SYSTEM,
    )


def update(policy: NodeThresholdPolicy, cpu: int) -> NodeThresholdPolicy:
    return THRESHOLDS.update(
        policy.pk, {"usage_thresholds": {"cpu": cpu}}, SYSTEM, expected_version=None
    )


def failed_push(policy: NodeThresholdPolicy, error: str) -> SyncJob:
    now = timezone.now()
    return SyncJob.objects.create(
        cluster=policy.cluster,
        kind=SyncJobKind.PUSH,
        status=SyncJobStatus.FAILED,
        started=now,
        finished=now,
        error=error,
    )


def test_from_never_pushed_to_queued_to_synced(
    policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    status = for_cluster(policy.cluster).of(policy)
    assert (status.state, status.label, status.job, status.underway) == (
        PENDING,
        "pending",
        None,
        None,
    )
    assert status.summary == "Never pushed to the cluster."

    queued = sync_services.push(policy.cluster)  # no worker ran it (not committed)
    status = for_cluster(policy.cluster).of(policy)
    assert status.state == PENDING and status.underway is not None
    assert status.underway.id == queued.pk and status.label == "pending · push queued"

    SyncJob.objects.filter(pk=queued.pk).delete()
    with run_on_commit():
        job = sync_services.push(policy.cluster)
    job.refresh_from_db()
    assert job.status == SyncJobStatus.SUCCEEDED, job.log
    jobs = for_cluster(policy.cluster)
    assert jobs.of(policy).state == SYNCED and jobs.of(policy).job.id == job.pk  # type: ignore[union-attr]
    assert jobs.overall.state == SYNCED
    assert jobs.of(policy).summary == f"Pushed by push #{job.pk}."


def test_a_change_after_the_push_is_pending_then_failed_then_retried(
    policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    with run_on_commit():
        sync_services.push(policy.cluster)
    policy = update(policy, 60)
    jobs = for_cluster(policy.cluster)
    assert jobs.of(policy).state == PENDING and jobs.overall.state == PENDING
    assert jobs.of(policy).summary == "Changed since the last push."

    failed = failed_push(policy, "ForbiddenError (HTTP 403): nodes is forbidden")
    status = for_cluster(policy.cluster).of(policy)
    assert status.state == FAILED and status.job is not None and status.job.id == failed.pk
    assert status.error == "ForbiddenError (HTTP 403): nodes is forbidden"
    assert status.summary == f"Push #{failed.pk} failed: {status.error}"

    # A new push waiting: pending again, still saying what failed.
    retry = sync_services.push(policy.cluster)
    status = for_cluster(policy.cluster).of(policy)
    assert status.state == PENDING and status.underway is not None
    assert status.underway.id == retry.pk and status.error_job == status.job
    assert "failed: ForbiddenError" in status.summary


def test_a_push_that_started_before_the_change_does_not_count(
    policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    with run_on_commit():
        job = sync_services.push(policy.cluster)
    # The change was saved while the push ran: it may have missed it.
    SyncJob.objects.filter(pk=job.pk).update(started=policy.updated - timedelta(seconds=1))
    NodeThresholdPolicy.objects.filter(pk=policy.pk).update(
        updated=policy.updated + timedelta(milliseconds=1)
    )
    policy.refresh_from_db()
    assert for_cluster(policy.cluster).of(policy).state == PENDING


def test_an_empty_dry_run_after_the_change_proves_it_synced(
    policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    with run_on_commit():
        sync_services.push(policy.cluster)
    policy = update(policy, 55)  # a new version, the same annotation
    assert for_cluster(policy.cluster).of(policy).state == PENDING
    plan = sync_services.plan(policy.cluster)
    assert plan.changes == []
    status = for_cluster(policy.cluster).of(policy)
    assert status.state == SYNCED and status.job is not None and status.job.id == plan.pk
    assert status.summary == f"Checked by dry-run #{plan.pk}: the cluster already has it."
    # A dry-run that found changes proves nothing.
    policy = update(policy, 70)
    assert sync_services.plan(policy.cluster).changes
    assert for_cluster(policy.cluster).of(policy).state == PENDING


def test_a_deletion_makes_the_cluster_pending(
    policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    other = THRESHOLDS.create(
        {"cluster": policy.cluster, "name": "other", "node_names": [], "node_selector": {}}
        | {"usage_thresholds": {"cpu": 50}, "priority": -5},
        SYSTEM,
    )
    with run_on_commit():
        sync_services.push(policy.cluster)
    assert for_cluster(policy.cluster).overall.state == SYNCED
    THRESHOLDS.delete(other.pk, SYSTEM, expected_version=None)
    jobs = for_cluster(policy.cluster)
    assert jobs.of(policy).state == SYNCED  # this one did not change
    assert jobs.overall.state == PENDING


def test_queries_do_not_grow_with_the_policies(
    policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    with run_on_commit():
        sync_services.push(policy.cluster)
    for n in range(5):
        THRESHOLDS.create(
            {"cluster": policy.cluster, "name": f"p{n}", "node_selector": {}}
            | {"usage_thresholds": {"cpu": 50 + n}, "priority": n + 1},
            SYSTEM,
        )
    for n in range(3):
        failed_push(policy, f"error {n}")
        sync_services.plan(policy.cluster)
    cluster = policy.cluster

    def queries_for_all() -> tuple[int, list[str], Any]:
        everything = list(NodeThresholdPolicy.objects.all())
        with CaptureQueriesContext(connection) as queries:
            jobs = for_cluster(cluster)
            states = [jobs.of(p).state for p in everything]
            overall = jobs.overall
        return len(queries), states, overall

    queries_for_all()  # per-process caches (content types) another test emptied fill up
    few, states, overall = queries_for_all()
    assert few <= 4  # the jobs, the last push, the cluster's last change (+ a cache miss)
    assert sorted(states) == [FAILED] * 5 + [SYNCED]  # the new ones; hot-pool was pushed
    assert overall.state == FAILED and overall.error == "error 2"
    for n in range(5, 15):
        THRESHOLDS.create(
            {"cluster": cluster, "name": f"p{n}", "node_selector": {}}
            | {"usage_thresholds": {"cpu": 50 + n}, "priority": n + 1},
            SYSTEM,
        )
    many, states, _ = queries_for_all()
    assert many == few and len(states) == 16  # not one more for ten more policies


def test_a_demo_clusters_collect_policy_is_not_written_not_synced(
    policy: NodeThresholdPolicy, run_on_commit: Any
) -> None:
    """A demo cluster has no slo-controller: a push writes no collect policy, so calling it
    synced would be false."""
    from policy.policies.models import NodeMetricCollectPolicy
    from policy.sync.status import NOT_WRITTEN

    collect = NodeMetricCollectPolicy.objects.create(
        cluster=policy.cluster, name="default", is_default=True, report_interval_seconds=30
    )
    with run_on_commit():
        sync_services.push(policy.cluster)
    jobs = for_cluster(policy.cluster)
    assert jobs.of(policy).state == SYNCED
    status = jobs.of(collect)
    assert status.state == NOT_WRITTEN and status.label == "not written (demo)"
    assert "no slo-controller" in status.summary
