"""Storing and pruning cluster snapshots, and the demo cluster's."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import reset_queries, transaction
from django.utils import timezone

from policy.clusters import snapshot_chains
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.clusters.object_changes import SnapshotChanges
from policy.core import broker
from policy.core.choices import ClusterKind
from scoring import generate_cluster

DEMO_CLUSTER = "demo"


def record_snapshot(
    cluster: Cluster,
    objects: Sequence[dict[str, Any]],
    taken_at: datetime,
    changes: SnapshotChanges | None = None,
) -> ClusterSnapshot:
    """Store ``objects`` as the cluster's snapshot at ``taken_at``, with their counts; given
    what changed since the newest snapshot, only that (``policy.clusters.snapshot_chains``)."""
    snapshot = snapshot_chains.store(cluster, objects, taken_at, changes)
    broker.prepare_views(cluster.pk)
    return snapshot


def record_replacements(
    cluster: Cluster, previous: ClusterSnapshot, changes: SnapshotChanges, taken_at: datetime
) -> ClusterSnapshot | None:
    """:func:`record_snapshot` of ``changes`` that only replace objects of ``previous``,
    without reading every object (``snapshot_chains.store_replacements``); None when a
    keyframe is due (record every object instead)."""
    snapshot = snapshot_chains.store_replacements(cluster, previous, changes, taken_at)
    if snapshot is not None:
        broker.prepare_views(cluster.pk)
    return snapshot


def load_demo_cluster(
    *, name: str = DEMO_CLUSTER, nodes: int = 60, seed: int = 7, now: datetime | None = None
) -> ClusterSnapshot:
    """Generate a synthetic cluster and store it as a new snapshot of demo cluster ``name``.

    Idempotent on the cluster (created once); each call adds a snapshot taken ``now``, so the
    NodeMetrics in the newest one are fresh.
    """
    now = now or timezone.now().replace(microsecond=0)
    with transaction.atomic():
        cluster, _ = Cluster.objects.get_or_create(name=name, defaults={"kind": ClusterKind.DEMO})
        pk = _record_generated(cluster, nodes, seed, now)
    # (Read again: the one stored holds every generated object, which the views the commit
    # prepares in this process on the embedded default should not find still held.)
    return ClusterSnapshot.snapshots.summaries().get(pk=pk)


def _record_generated(cluster: Cluster, nodes: int, seed: int, now: datetime) -> int:
    pk = record_snapshot(cluster, generate_cluster(nodes=nodes, seed=seed, now=now), now).pk
    reset_queries()  # with DEBUG, the query log would keep the INSERT: every object as SQL
    return pk


def prune_snapshots(keep: int | None = None, pinned: Collection[int] = ()) -> int:
    """Delete all but the newest ``keep`` snapshots of every cluster (and the ``pinned``
    ones, which something still needs); returns how many went."""
    keep = keep or settings.SNAPSHOT_RETENTION
    return sum(
        snapshot_chains.prune(cluster_id, keep, pinned)
        for cluster_id in Cluster.objects.values_list("id", flat=True)
    )
