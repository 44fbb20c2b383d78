"""Stored snapshots as keyframes and chains of changes.

A real cluster is refreshed every minute and its NodeMetrics change every minute, so storing
every object each time would write tens of megabytes a minute for a 5,000-node cluster and make
the refresh cost the cluster's size. A refresh whose reader knows what changed since the newest
stored snapshot (the informer, ``policy.clusters.gateway.informer``) stores only that: the
objects added or modified and the keys of those deleted, against the same keyframe as the
newest snapshot. A snapshot's objects are its keyframe's with the changes of every snapshot
of its chain up to it
applied, in order (:func:`materialize`).

A new keyframe is stored when there is no usable base (another process stored in between, a
kind was listed again), after :data:`MAX_CHAIN` changes, or when more than
:data:`MAX_CHANGED_SHARE` of the objects (and more than :data:`FEW_CHANGES`) changed. Pruning
removes whole chains only (:func:`prune`), so every kept snapshot can still be put together.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence, Sized
from datetime import datetime
from typing import Any

from django.db import transaction

from policy.clusters.models import Cluster, ClusterSnapshot
from policy.clusters.object_changes import (
    Json,
    SnapshotChanges,
)
from policy.clusters.snapshots import count_objects, scheduling_failures


def materialize(snapshot: ClusterSnapshot) -> list[Json]:
    """Every object of ``snapshot``, read again (``snapshot.objects`` keeps what it read)."""
    return snapshot.read_objects()


MAX_CHAIN = 30  # snapshots of changes against one keyframe
MAX_CHANGED_SHARE = 0.25  # beyond this share of the objects, a keyframe is smaller to read
FEW_CHANGES = 100  # this many changes are stored as changes whatever the share


def store(
    cluster: Cluster,
    objects: Sequence[Json],
    taken_at: datetime,
    changes: SnapshotChanges | None = None,
) -> ClusterSnapshot:
    """Store ``objects`` as the cluster's snapshot at ``taken_at``: as ``changes`` when they
    are changes since the newest snapshot and a chain may grow, else as a keyframe."""
    counts: dict[str, Any] = {
        **count_objects(objects),
        "scheduling_failures": scheduling_failures(objects),
    }
    with transaction.atomic():
        keyframe = _chain_to_extend(cluster, objects, changes)
        if keyframe is None or changes is None:
            return ClusterSnapshot.snapshots.create(
                cluster=cluster, taken_at=taken_at, stored_objects=list(objects), **counts
            )
        return ClusterSnapshot.snapshots.create(
            cluster=cluster,
            taken_at=taken_at,
            keyframe_id=keyframe,
            changes={"put": changes.put, "delete": [list(ref) for ref in changes.delete]},
            **counts,
        )


COUNTS = ("node_count", "pod_count", "pending_pod_count", "node_metric_count", "topology_count")


def store_replacements(
    cluster: Cluster, previous: ClusterSnapshot, changes: SnapshotChanges, taken_at: datetime
) -> ClusterSnapshot | None:
    """Store ``changes`` that only replace objects ``previous`` has (no object added, none
    deleted, no Pod nor Event among them: its counts and FailedScheduling messages hold) as
    the cluster's next snapshot, without reading every object; None when the chain cannot
    grow (the caller stores a keyframe of every object instead)."""
    if changes.delete or any(obj.get("kind") in ("Pod", "Event") for obj in changes.put):
        raise ValueError("store_replacements takes replaced objects only (no Pod, no Event)")
    carried = ClusterSnapshot.snapshots.filter(pk=previous.pk).values(
        "scheduling_failures", *COUNTS
    )
    with transaction.atomic():
        row = carried.first()
        total = sum(row[name] for name in COUNTS) if row is not None else 0
        keyframe = _chain_to_extend(cluster, range(total), changes)
        if row is None or keyframe is None:
            return None
        return ClusterSnapshot.snapshots.create(
            cluster=cluster,
            taken_at=taken_at,
            keyframe_id=keyframe,
            changes={"put": changes.put, "delete": []},
            **row,
        )


def _chain_to_extend(
    cluster: Cluster, objects: Sized, changes: SnapshotChanges | None
) -> int | None:
    """The keyframe id ``changes`` can be stored against, or None for a new keyframe."""
    if changes is None:
        return None
    if len(changes) > max(FEW_CHANGES, MAX_CHANGED_SHARE * len(objects)):
        return None
    newest = (
        ClusterSnapshot.snapshots.select_for_update()
        .filter(cluster=cluster)
        .order_by("-id")
        .values("id", "keyframe_id")
        .first()
    )
    if newest is None or newest["id"] != changes.since:
        return None
    keyframe: int = newest["keyframe_id"] or newest["id"]
    if ClusterSnapshot.snapshots.filter(keyframe_id=keyframe).count() >= MAX_CHAIN:
        return None
    return keyframe


def prune(cluster_id: int, keep: int, pinned: Collection[int] = ()) -> int:
    """Delete all but the newest ``keep`` snapshots of a cluster and the ``pinned`` ones, and
    what the kept ones need (their chains' keyframes and earlier changes); returns how many
    went."""
    rows = ClusterSnapshot.snapshots.filter(cluster_id=cluster_id)
    kept = list(rows.order_by("-taken_at", "-id").values("id", "keyframe_id")[:keep])
    kept += rows.filter(id__in=list(pinned)).values("id", "keyframe_id")
    chains = {row["keyframe_id"] or row["id"] for row in kept}
    stale = rows.exclude(id__in=[row["id"] for row in kept])
    stale = stale.exclude(id__in=chains).exclude(keyframe_id__in=chains)
    return int(stale.delete()[0])
