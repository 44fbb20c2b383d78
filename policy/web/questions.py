"""The pages' engine questions, answered where the cluster's engine state is held
(``policy.engine``): the views of a snapshot, a node in detail."""

from __future__ import annotations

import dataclasses
from typing import Any

from policy.clusters.models import ClusterSnapshot
from policy.engine.questions import Refused, question
from policy.web import pages
from policy.web.presenters.node import node_detail


def _stored(payload: dict[str, Any]) -> ClusterSnapshot:
    stored = ClusterSnapshot.snapshots.summaries().filter(pk=payload["snapshot"]).first()
    if stored is None:
        raise Refused("snapshot", f"no snapshot {payload['snapshot']}")
    return stored


def _snapshot(stored: ClusterSnapshot) -> Any:
    try:
        return pages.engine_snapshot(stored)
    except pages.SnapshotUnreadable as exc:
        raise Refused("snapshot", str(exc)) from None


@question("prepare-views")
def prepare_views(payload: dict[str, Any]) -> dict[str, Any]:
    """Prepare the dashboard's load (for the profile asked) and the pending pods."""
    stored = _stored(payload)
    source = pages.loadaware_source(stored.cluster, payload.get("profile"))
    try:
        pages.prepare_views(stored, source)
    except pages.SnapshotUnreadable as exc:
        raise Refused("snapshot", str(exc)) from None
    return {}


@question("node-detail")
def node(payload: dict[str, Any]) -> dict[str, Any]:
    stored = _stored(payload)
    source = pages.loadaware_source(stored.cluster, payload.get("profile"))
    detail = node_detail(_snapshot(stored), source.plugin, stored.taken_at, payload["name"])
    return {"node": dataclasses.asdict(detail) if detail is not None else None}
