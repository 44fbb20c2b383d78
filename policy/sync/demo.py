"""A demo cluster that behaves like one: NodeMetric usage drifts, reports keep arriving.

Each drift step copies the newest snapshot, moves every NodeMetric's node usage by a few
percent (a bounded random walk, kept under the node's allocatable) and moves every
``updateTime`` forward by the time elapsed, so fresh metrics stay fresh and the expired or
missing ones (which the demo shows on purpose) stay expired or missing. Node objects,
including the annotations a push wrote, are carried over unchanged.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from scoring import (
    InputError,
    QuantityError,
    cpu_quantity,
    memory_quantity,
    parse_time,
    resource_amount,
)

STEP = 0.06  # at most 6% of the current usage per step
FLOOR = 0.02  # never below 2% of allocatable


def _allocatable(objects: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    result: dict[str, dict[str, int]] = {}
    for obj in objects:
        if obj.get("kind") != "Node":
            continue
        raw = (obj.get("status") or {}).get("allocatable") or {}
        try:
            result[obj["metadata"]["name"]] = {
                name: resource_amount(name, raw[name]) for name in ("cpu", "memory") if name in raw
            }
        except (QuantityError, InputError, ValueError):
            continue
    return result


def _walk(current: int, limit: int | None, rng: random.Random) -> int:
    moved = int(current * (1 + rng.uniform(-STEP, STEP)))
    if limit:
        moved = max(int(limit * FLOOR), min(int(limit * 0.98), moved))
    return max(moved, 0)


def _shift(stamp: Any, elapsed: timedelta) -> Any:
    try:
        moved = parse_time(stamp) + elapsed
    except (ValueError, TypeError):
        return stamp
    return moved.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def drifted_objects(
    objects: Sequence[dict[str, Any]],
    taken_at: datetime,
    now: datetime,
    *,
    seed: int | None = None,
) -> list[dict[str, Any]]:
    """``objects`` one drift step later (``now``); the input is not modified."""
    rng = random.Random(seed)
    elapsed = max(now - taken_at, timedelta(0))
    allocatable = _allocatable(objects)
    result = []
    for obj in objects:
        if obj.get("kind") != "NodeMetric":
            result.append(obj)
            continue
        metric = copy.deepcopy(obj)
        status = metric.setdefault("status", {})
        if "updateTime" in status:
            status["updateTime"] = _shift(status["updateTime"], elapsed)
        usage = ((status.get("nodeMetric") or {}).get("nodeUsage") or {}).get("resources")
        limits = allocatable.get(metric["metadata"]["name"], {})
        if isinstance(usage, dict):
            try:
                if "cpu" in usage:
                    cpu = resource_amount("cpu", usage["cpu"])
                    usage["cpu"] = cpu_quantity(_walk(cpu, limits.get("cpu"), rng))
                if "memory" in usage:
                    memory = resource_amount("memory", usage["memory"])
                    walked = _walk(memory, limits.get("memory"), rng)
                    usage["memory"] = memory_quantity(walked >> 10 << 10)
            except (QuantityError, ValueError):
                pass
        result.append(metric)
    return result


def drift_demo_clusters(now: datetime | None = None) -> list[int]:
    """One drift step for every demo cluster with a snapshot; returns the new snapshots' ids."""
    from django.utils import timezone

    from policy.clusters.models import Cluster, ClusterSnapshot
    from policy.clusters.object_changes import SnapshotChanges
    from policy.clusters.services import record_replacements, record_snapshot
    from policy.clusters.snapshot_kinds import objects_of_kinds
    from policy.core.choices import ClusterKind

    now = now or timezone.now().replace(microsecond=0)
    created = []
    for cluster in Cluster.objects.filter(kind=ClusterKind.DEMO):
        latest = cluster.latest_snapshot()
        if latest is None or latest.taken_at >= now:
            continue
        # Stored as what changed (the NodeMetrics), as an informer's refresh is: the engine
        # steps its state instead of building it anew, and the history costs the metrics.
        # Only the Nodes and NodeMetrics are read; a keyframe (every 30 steps) reads all.
        objects = objects_of_kinds(latest, ("Node", "NodeMetric"))
        drifted = drifted_objects(objects, latest.taken_at, now)
        moved = [new for old, new in zip(objects, drifted, strict=True) if new is not old]
        stored = record_replacements(cluster, latest, SnapshotChanges(latest.pk, moved, []), now)
        if stored is None:
            everything = ClusterSnapshot.snapshots.get(pk=latest.pk).objects
            stored = record_snapshot(
                cluster, drifted_objects(everything, latest.taken_at, now), now
            )
        created.append(stored.pk)
    return created
