"""Decision history retention."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from policy.clusters import services as cluster_services
from policy.clusters.models import Cluster
from policy.decisions.models import ExplanationBase, PlacementDecision

BASE_GRACE = timedelta(hours=1)


def prune_decisions(now: datetime | None = None) -> int:
    """Delete decisions older than ``DECISION_RETENTION_DAYS``, and beyond the newest
    ``DECISION_RETENTION_COUNT`` of each cluster, then the bases no decision needs any more;
    returns how many decisions went. Explanations are large (every node's verdict), so
    history is bounded in time and per cluster."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.DECISION_RETENTION_DAYS)
    deleted = PlacementDecision.objects.filter(created__lt=cutoff).delete()[0]
    keep = settings.DECISION_RETENTION_COUNT
    for cluster_id in Cluster.objects.values_list("id", flat=True):
        newest = PlacementDecision.objects.filter(cluster_id=cluster_id).order_by("-created", "-id")
        beyond = newest.values_list("id", flat=True)[keep:]
        ids = list(beyond)
        if ids:
            deleted += PlacementDecision.objects.filter(id__in=ids).delete()[0]
    # An hour's grace: the newest snapshot's base stays while the snapshot is still evaluated,
    # even when retention took all its decisions (the next would only make it again).
    unused = ExplanationBase.objects.filter(decisions__isnull=True)
    unused.filter(created__lt=now - BASE_GRACE).delete()
    return deleted


def prune_snapshots() -> int:
    """Keep the newest ``SNAPSHOT_RETENTION`` snapshots of each cluster; returns how many
    went."""
    return cluster_services.prune_snapshots()
