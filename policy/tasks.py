"""Celery tasks. They take IDs, reload rows, and return quietly when the row is gone."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task

from policy import services
from policy.models import ClusterSnapshot
from policy.snapshots import summarize

logger = logging.getLogger(__name__)


@shared_task
def ping() -> str:
    """Answers ``pong``: proves a worker consumes the queue (readiness, end-to-end tests)."""
    return "pong"


@shared_task
def snapshot_summary_task(snapshot_id: int) -> dict[str, Any] | None:
    """Counts and NodeMetric freshness of a snapshot, or None if it was deleted."""
    try:
        snapshot = ClusterSnapshot.snapshots.get(id=snapshot_id)
    except ClusterSnapshot.DoesNotExist:
        logger.info("snapshot %s is gone; nothing to summarize", snapshot_id)
        return None
    summary = summarize(snapshot.objects, snapshot.taken_at)
    return {
        "snapshot": snapshot.id,
        "nodes": summary.nodes,
        "pods_bound": summary.pods_bound,
        "pods_pending": summary.pods_pending,
        "node_metrics": dict(summary.metrics),
        "hot_nodes": summary.hot_nodes,
    }


@shared_task
def prune_snapshots_task() -> int:
    """Periodic (beat): keep the newest ``SNAPSHOT_RETENTION`` snapshots per cluster."""
    deleted = services.prune_snapshots()
    logger.info("pruned %d snapshots", deleted)
    return deleted
