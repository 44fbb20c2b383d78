"""Sync services for views and tasks: push, dry-run, refresh, drift (see :mod:`policy.sync`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.utils import timezone

from policy.clusters.models import Cluster
from policy.core import broker
from policy.sync import attention, jobs
from policy.sync.confirmation import plan_digest
from policy.sync.models import ClusterSyncState, SyncJob, SyncJobKind, SyncJobStatus, SyncJobTrigger


def push(
    cluster: Cluster,
    *,
    user: AbstractBaseUser | AnonymousUser | None = None,
    trigger: str = SyncJobTrigger.OPERATOR,
    confirmed: Sequence[dict[str, Any]] | None = None,
) -> SyncJob:
    """Queue a push of ``cluster`` (or return the one already queued); sent on commit.

    With ``confirmed`` (the changes of the plan an operator confirmed) the push writes only
    changes among those, else it fails writing nothing (:mod:`policy.sync.confirmation`).
    """
    return jobs.request_push(cluster, trigger=trigger, user=user, confirmed=confirmed)


def plan(cluster: Cluster, *, user: AbstractBaseUser | AnonymousUser | None = None) -> SyncJob:
    """The dry-run: what a push would change now, recorded as a finished job."""
    return jobs.plan_push(cluster, user=user)


def attention_reasons(changes: Sequence[dict[str, Any]]) -> list[str]:
    """Why a dry-run's changes need acknowledging before they are pushed (empty: none)."""
    return attention.needs_acknowledgement(changes)


class UnknownPlan(LookupError):
    """The plan to confirm is not a succeeded dry-run of the cluster."""


@dataclass(frozen=True)
class Confirmation:
    """What confirming a reviewed dry-run came to: the fresh dry-run, and the queued push when
    there is one.

    ``outcome``: ``queued``; ``stale`` (the changes differ from the reviewed plan's: nothing
    pushed, the new plan is for review); ``nothing`` (nothing to push); ``plan-failed``;
    ``unacknowledged`` (the plan changes what can break the scheduler, ``attention`` says
    what, and the operator did not acknowledge it: nothing pushed).
    """

    plan: SyncJob
    outcome: str
    job: SyncJob | None = None
    attention: tuple[str, ...] = ()


def reviewed_plan(cluster: Cluster, plan_id: int) -> SyncJob:
    """The succeeded dry-run ``plan_id`` of ``cluster`` (:class:`UnknownPlan` otherwise)."""
    found = SyncJob.objects.filter(
        pk=plan_id, cluster=cluster, kind=SyncJobKind.DRY_RUN, status=SyncJobStatus.SUCCEEDED
    ).first()
    if found is None:
        raise UnknownPlan(f"no succeeded dry-run {plan_id} of cluster {cluster.name}")
    return found


def confirm_push(
    cluster: Cluster,
    plan_id: int,
    *,
    user: AbstractBaseUser | AnonymousUser | None,
    acknowledged: bool = False,
) -> Confirmation:
    """The one way an operator confirms a push, from the pages and the API alike: name the
    dry-run they reviewed. Plan again and push only if the changes are still that plan's; the
    push carries them as its limit and writes nothing beyond them, even when a worker runs it
    later (:mod:`policy.sync.confirmation`). A plan whose changes need attention
    (:mod:`policy.sync.attention`) is pushed only when ``acknowledged``."""
    reviewed = reviewed_plan(cluster, plan_id)
    fresh = plan(cluster, user=user)
    if fresh.status != SyncJobStatus.SUCCEEDED:
        return Confirmation(fresh, "plan-failed")
    if plan_digest(fresh.changes) != plan_digest(reviewed.changes):
        return Confirmation(fresh, "stale")
    if not fresh.changes:
        return Confirmation(fresh, "nothing")
    reasons = tuple(attention.needs_acknowledgement(fresh.changes))
    if reasons and not acknowledged:
        return Confirmation(fresh, "unacknowledged", attention=reasons)
    return Confirmation(fresh, "queued", push(cluster, user=user, confirmed=reviewed.changes))


def refresh(
    cluster: Cluster,
    *,
    user: AbstractBaseUser | AnonymousUser | None = None,
    trigger: str = SyncJobTrigger.OPERATOR,
) -> SyncJob:
    """Queue a read-back of ``cluster`` into a new snapshot."""
    return jobs.request_refresh(cluster, trigger=trigger, user=user)


def last_refresh_notes(cluster: Cluster) -> tuple[SyncJob | None, list[str]]:
    """The last successful refresh and what it noted besides drift (which has its own report):
    e.g. that it found no scheduler configuration at the key the cluster names."""
    job = (
        SyncJob.objects.filter(
            cluster=cluster, kind=SyncJobKind.REFRESH, status=SyncJobStatus.SUCCEEDED
        )
        .only("pk", "notes", "finished")
        .order_by("-finished", "-pk")
        .first()
    )
    if job is None:
        return None, []
    return job, [note for note in job.notes or [] if not str(note).startswith("drift: ")]


def drift_report(cluster: Cluster) -> dict[str, Any]:
    """Drift found by the last refresh (what differs from what schedboard last wrote), with
    the snapshot's age and the last push."""
    state = ClusterSyncState.objects.filter(cluster=cluster).first()
    latest = cluster.latest_snapshot()
    now = timezone.now()
    snapshot = (
        {
            "id": latest.pk,
            "taken_at": latest.taken_at,
            "age_seconds": round((now - latest.taken_at).total_seconds(), 1),
        }
        if latest
        else None
    )
    drift = list(state.drift or []) if state else []
    return {
        "cluster": cluster.pk,
        "drifted": bool(drift),
        "checked_at": state.drift_checked_at if state else None,
        "last_push": state.last_push_id if state else None,
        "last_pushed_at": state.last_pushed_at if state else None,
        "snapshot": snapshot,
        "drift": drift,
    }


@dataclass(frozen=True)
class QueuedTask:
    name: str
    id: str


def request_cluster_sync(cluster: Cluster) -> QueuedTask:
    """Queue an automatic push of ``cluster`` once the current transaction commits (a push
    already waiting in the queue is reused; see :mod:`policy.sync.jobs`)."""
    job = push(cluster, trigger=SyncJobTrigger.AUTOMATIC)
    return QueuedTask(name=broker.PUSH_CLUSTER, id=str(job.pk))
