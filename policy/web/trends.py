"""Trends of the dashboard's load over a cluster's snapshot history.

Each snapshot's load (``policy.web.presenters.loadaware.ClusterLoad``, per LoadAware
configuration) is summed up once into a :class:`~policy.web.models.SnapshotTrend` row: the
mean, 90th percentile and highest cpu and memory load, how many nodes are above their threshold
and filtered now, the pending pods, and every node's own load, compressed. The row is written
when the worker prepares the snapshot (``policy.web.pages.prepare_views``) or when the
dashboard has the load in hand; snapshots stored before that get theirs from their prepared
load, a few per page view. A trend reads at most :data:`WINDOW` rows and never materializes a
snapshot, so it costs the same for 50 or 5,000 nodes (a node's trend reads one small entry per
snapshot).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.db import IntegrityError, transaction

from policy.clusters.models import Cluster, ClusterSnapshot, PreparedView, SnapshotTrend
from policy.web import prepared
from policy.web.presenters.loadaware import RESOURCES, ClusterLoad

WINDOW = 48  # snapshots a trend covers, newest last
BACKFILL_PER_VIEW = 3  # older snapshots summed up from their prepared load per page view


def _stats(values: list[int]) -> tuple[float | None, float | None, float | None]:
    if not values:
        return None, None, None
    array = np.asarray(values, dtype=float)
    return (
        round(float(array.mean()), 1),
        round(float(np.percentile(array, 90)), 1),
        float(array.max()),
    )


def aggregate(load: ClusterLoad) -> dict[str, Any]:
    """The SnapshotTrend fields of ``load`` (``per_node`` as data, not yet compressed)."""
    fields: dict[str, Any] = {
        "nodes": len(load.rows),
        "measured": sum(1 for row in load.rows if row.has_usage),
        "over": sum(1 for row in load.rows if row.over),
        "filtered": load.filtered,
        "pods_pending": load.pods_pending,
    }
    for resource in RESOURCES:
        totals = [
            total
            for row in load.rows
            if (total := _usage(row.usage, resource, "total")) is not None
        ]
        mean, p90, top = _stats(totals)
        fields |= {f"{resource}_mean": mean, f"{resource}_p90": p90, f"{resource}_max": top}
    fields["per_node"] = {
        row.name: [_usage(row.usage, resource, "total") for resource in RESOURCES]
        + [_usage(row.usage, resource, "threshold") for resource in RESOURCES]
        for row in load.rows
    }
    return fields


def _usage(usage: Any, resource: str, attribute: str) -> int | None:
    found = usage.get(resource)
    return None if found is None else getattr(found, attribute)


def record(stored: ClusterSnapshot, key: str, load: ClusterLoad) -> None:
    """Keep ``load``'s aggregates as the trend row of ``stored`` for configuration ``key``."""
    fields = aggregate(load)
    per_node = json.dumps(fields.pop("per_node"), separators=(",", ":")).encode()
    fields["per_node"] = zlib.compress(per_node, 3)
    try:
        with transaction.atomic():
            SnapshotTrend.objects.update_or_create(snapshot=stored, key=key, defaults=fields)
    except IntegrityError:  # another process recorded it meanwhile: the same numbers
        pass


@dataclass(frozen=True)
class Point:
    """One snapshot of a trend."""

    snapshot_id: int
    taken_at: datetime
    nodes: int
    measured: int
    cpu_mean: float | None
    cpu_p90: float | None
    cpu_max: float | None
    memory_mean: float | None
    memory_p90: float | None
    memory_max: float | None
    over: int
    filtered: int
    pods_pending: int


_POINT_FIELDS = [name for name in Point.__dataclass_fields__ if name not in ("taken_at",)]


def _window(cluster: Cluster, window: int) -> list[Any]:
    """The cluster's newest ``window`` snapshots (ids and times only), newest first."""
    return list(
        ClusterSnapshot.snapshots.filter(cluster=cluster)
        .order_by("-taken_at", "-id")
        .values("id", "taken_at")[:window]
    )


def _profile(key: str) -> str:
    return key.rpartition(":")[2]


def _pick(rows: Iterable[Any], key: str) -> dict[int, dict[str, Any]]:
    """Per snapshot, its row for ``key``, else the newest one for the same profile under an
    earlier configuration (what was in force when it was prepared), else one made without a
    LoadAware profile; never another profile's."""
    profile = _profile(key)
    chosen: dict[int, dict[str, Any]] = {}
    for row in rows:
        theirs = _profile(row["key"])
        if theirs and theirs != profile:
            continue
        held = chosen.get(row["snapshot_id"])
        rank = (row["key"] == key, theirs == profile, row["id"])
        if held is None or rank > (
            held["key"] == key,
            _profile(held["key"]) == profile,
            held["id"],
        ):
            chosen[row["snapshot_id"]] = row
    return chosen


def _backfill(missing: list[int], key: str, limit: int) -> None:
    """Sum up to ``limit`` of the ``missing`` snapshots (newest first) from their prepared
    load, when they have one: nothing is rebuilt or materialized."""
    if limit <= 0 or not missing:
        return
    views = _pick(
        PreparedView.objects.filter(snapshot_id__in=missing, kind=prepared.LOAD).values(
            "id", "snapshot_id", "key"
        ),
        key,
    )
    order = {snapshot_id: k for k, snapshot_id in enumerate(missing)}
    for snapshot_id in sorted(views, key=order.__getitem__)[:limit]:
        view = views[snapshot_id]
        data = PreparedView.objects.filter(pk=view["id"]).values_list("data", flat=True).first()
        stored = ClusterSnapshot.snapshots.summaries().filter(pk=snapshot_id).first()
        if data is None or stored is None:
            continue
        try:
            load = prepared.decode_load(json.loads(zlib.decompress(bytes(data))))
        except (ValueError, TypeError, KeyError, zlib.error):
            continue
        record(stored, view["key"], load)


def points(
    cluster: Cluster,
    key: str,
    *,
    shown: tuple[ClusterSnapshot, ClusterLoad] | None = None,
    window: int = WINDOW,
    backfill: int = BACKFILL_PER_VIEW,
) -> list[Point]:
    """The cluster's trend over its newest ``window`` snapshots, oldest first, for the
    configuration ``key`` where recorded (else the one each snapshot was prepared with).
    ``shown`` is a snapshot whose load the caller holds: recorded if it is not yet."""
    snapshots = _window(cluster, window)
    ids = [row["id"] for row in snapshots]
    found = _trend_rows(ids, key)
    missing = [pk for pk in ids if pk not in found]
    changed = False
    if shown is not None and shown[0].pk in missing:
        record(shown[0], key, shown[1])
        missing.remove(shown[0].pk)
        changed = True
    if missing and backfill:
        _backfill(missing, key, backfill)
        changed = True
    if changed:
        found = _trend_rows(ids, key)
    out = []
    for snapshot in reversed(snapshots):
        row = found.get(snapshot["id"])
        if row is not None:
            values = {name: row[name] for name in _POINT_FIELDS}
            out.append(Point(taken_at=snapshot["taken_at"], **values))
    return out


def _trend_rows(ids: list[int], key: str) -> dict[int, dict[str, Any]]:
    rows = SnapshotTrend.objects.filter(snapshot_id__in=ids).values("id", "key", *_POINT_FIELDS)
    return _pick(rows, key)


@dataclass(frozen=True)
class NodePoint:
    """One node's load (% of allocatable) and thresholds (0: not checked) in one snapshot."""

    snapshot_id: int
    taken_at: datetime
    cpu: int | None
    memory: int | None
    cpu_threshold: int | None
    memory_threshold: int | None


def _node_entry(data: bytes, name: str) -> list[int | None] | None:
    """Node ``name``'s entry of a per-node map as ``record`` writes it (compact JSON whose
    values are flat lists of numbers), without parsing the other 4,999 nodes' entries."""
    key = json.dumps(name).encode() + b":["
    for opening in (b"{", b","):
        start = data.find(opening + key)
        if start >= 0:
            start += len(opening) + len(key) - 1
            end = data.find(b"]", start)
            entry: list[int | None] = json.loads(data[start : end + 1])
            return entry
    return None


def node_points(cluster: Cluster, name: str, key: str, *, window: int = WINDOW) -> list[NodePoint]:
    """Node ``name``'s load over the cluster's newest ``window`` snapshots, oldest first
    (snapshots the node was not part of are left out)."""
    snapshots = _window(cluster, window)
    ids = [row["id"] for row in snapshots]
    chosen = _trend_rows(ids, key)
    missing = [pk for pk in ids if pk not in chosen]
    if missing:
        _backfill(missing, key, BACKFILL_PER_VIEW)
        chosen = _trend_rows(ids, key)
    blobs = dict(
        SnapshotTrend.objects.filter(pk__in=[row["id"] for row in chosen.values()]).values_list(
            "id", "per_node"
        )
    )
    out = []
    for snapshot in reversed(snapshots):
        row = chosen.get(snapshot["id"])
        if row is None or row["id"] not in blobs:
            continue
        loads = _node_entry(zlib.decompress(bytes(blobs[row["id"]])), name)
        if loads is None:
            continue
        out.append(NodePoint(snapshot["id"], snapshot["taken_at"], *loads))
    return out


def usage_samples(cluster: Cluster, key: str, resource: str, *, window: int = WINDOW) -> Any:
    """Every recorded node load (% of allocatable, as LoadAware sees it: measured usage plus
    the estimates of recently placed pods) of ``resource`` over the newest ``window``
    snapshots: ``{node name: [load per snapshot]}`` and how many snapshots had a record."""
    column = RESOURCES.index(resource)
    ids = [row["id"] for row in _window(cluster, window)]
    chosen = _trend_rows(ids, key)
    blobs = SnapshotTrend.objects.filter(pk__in=[row["id"] for row in chosen.values()])
    samples: dict[str, list[int]] = {}
    for data in blobs.values_list("per_node", flat=True):
        per_node = json.loads(zlib.decompress(bytes(data)))
        for name, entry in per_node.items():
            if entry[column] is not None:
                samples.setdefault(name, []).append(int(entry[column]))
    return samples, len(chosen)
