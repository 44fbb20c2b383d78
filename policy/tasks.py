"""Celery tasks. They take IDs, reload rows, and return quietly when the row is gone."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task

from policy.accounts import retention as accounts_retention
from policy.decisions import retention, whatif
from policy.engine import server

logger = logging.getLogger(__name__)


@shared_task
def ping() -> str:
    """Answers ``pong``: proves a worker consumes the queue (readiness, end-to-end tests)."""
    return "pong"


@shared_task(acks_late=False)
def engine_question(cluster_id: int, name: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The engine tier's answer to question ``name`` about ``cluster_id`` (routed to the
    cluster's shard, ``policy.engine.shards``). Not acknowledged late: a question whose worker
    died is not asked again; the asking request answered 503 already."""
    return server.answer(name, payload)


@shared_task
def prepare_snapshot(cluster_id: int) -> bool:
    """Prepare what the pages show of the cluster's newest snapshot (``policy.web.prepared``);
    False when there is nothing (left) to prepare. Runs where the cluster's engine state is
    held (its engine shard), which it brings to the newest snapshot."""
    from policy.web.pages import prepare_newest

    with server.engine_task():
        return prepare_newest(cluster_id)


@shared_task
def prune_decisions_task() -> int:
    """Periodic (beat): drop decisions past DECISION_RETENTION_DAYS / _COUNT."""
    deleted = retention.prune_decisions()
    logger.info("pruned %d decisions", deleted)
    return deleted


@shared_task
def prune_authorization_failures_task() -> int:
    """Periodic (beat): drop refused-request records past AUTHORIZATION_FAILURE_RETENTION_*."""
    deleted = accounts_retention.prune_authorization_failures()
    logger.info("pruned %d authorization failures", deleted)
    return deleted


@shared_task
def prune_snapshots_task() -> int:
    """Periodic (beat): keep the newest ``SNAPSHOT_RETENTION`` snapshots per cluster."""
    deleted = retention.prune_snapshots()
    logger.info("pruned %d snapshots", deleted)
    return deleted


# --------------------------------------------------------------------------------------------
# Cluster sync (policy.sync): tasks carry job or cluster ids; the SyncJob row is the truth.


def _worker_name(task: Any) -> str:
    return f"{task.request.hostname or 'local'}:{task.request.id or '-'}"


@shared_task(bind=True, acks_late=True, max_retries=None)
def push_cluster(self: Any, job_id: int) -> dict[str, Any] | None:
    """Run push job ``job_id``; transient API errors send it again with capped backoff."""
    from policy.sync import jobs

    try:
        job = jobs.run_job(job_id, _worker_name(self))
    except jobs.RetryLater as exc:
        raise self.retry(countdown=exc.countdown, exc=exc) from None
    return {"job": job.pk, "status": job.status} if job else None


@shared_task(bind=True, acks_late=True, max_retries=None)
def refresh_cluster(self: Any, job_id: int) -> dict[str, Any] | None:
    """Run refresh job ``job_id``: read its cluster back into a snapshot, record drift, then
    evaluate the pending pods; transient API errors send it again with capped backoff."""
    from policy.sync import jobs

    try:
        job = jobs.run_job(job_id, _worker_name(self))
    except jobs.RetryLater as exc:
        raise self.retry(countdown=exc.countdown, exc=exc) from None
    return {"job": job.pk, "status": job.status} if job else None


@shared_task
def refresh_clusters() -> list[int]:
    """Beat, every 15 s: refresh the connected clusters whose refresh interval has passed."""
    from policy.sync import jobs

    return jobs.refresh_due()


@shared_task
def evaluate_pending(cluster_id: int) -> dict[str, int] | None:
    """After a refresh: record a decision for each pending pod whose decision changed, and
    for each pod the cluster's scheduler bound since the previous snapshot."""
    from policy.decisions.services import after_refresh

    with server.engine_task():
        return after_refresh(cluster_id)


@shared_task
def apply_time_windows() -> list[int]:
    """Beat, every minute: push clusters whose active threshold windows changed."""
    from policy.sync import jobs

    return jobs.apply_time_windows()


@shared_task
def drift_demo_metrics() -> list[int]:
    """Beat: a drift step of every demo cluster's NodeMetrics (a new snapshot each)."""
    from policy.sync.demo import drift_demo_clusters

    return drift_demo_clusters()


@shared_task
def recover_sync_jobs() -> list[int]:
    """Beat: send again the sync jobs whose message was lost or whose worker died."""
    from policy.sync import jobs

    return jobs.recover()


# --------------------------------------------------------------------------------------------
# What-if comparisons (policy.decisions.whatif): the WhatIfRun row is the job.


@shared_task(bind=True, acks_late=True)
def run_what_if(self: Any, run_id: int) -> str | None:
    """Run what-if comparison ``run_id``; its final status (None: already claimed or gone)."""
    return whatif.execute(run_id, worker=_worker_name(self))


@shared_task
def recover_what_ifs() -> dict[str, list[int]]:
    """Beat: re-send lost comparisons, fail the ones whose worker died."""
    return whatif.recover()
