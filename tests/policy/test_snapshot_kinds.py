"""Picking some kinds out of a stored snapshot in the database gives exactly the objects of
those kinds that reading every object gives: for a keyframe, and for a chain of changes with
objects replaced, added and deleted."""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

import pytest

from policy.clusters.models import ClusterSnapshot
from policy.clusters.object_changes import SnapshotChanges, object_ref
from policy.clusters.services import load_demo_cluster, record_snapshot
from policy.clusters.snapshot_chains import materialize
from policy.clusters.snapshot_kinds import objects_of_kinds
from tests.conftest import NOW

pytestmark = pytest.mark.django_db
KINDS = ("Node", "NodeMetric")


def picked(snapshot: ClusterSnapshot) -> list[dict[str, Any]]:
    return [o for o in materialize(snapshot) if o.get("kind") in KINDS]


def test_the_kinds_of_a_keyframe_and_of_a_chain_are_those_of_every_object() -> None:
    first = load_demo_cluster(nodes=12, now=NOW)
    assert objects_of_kinds(first, KINDS) == picked(first)
    objects = materialize(first)
    node = next(o for o in objects if o["kind"] == "Node")
    metric = next(o for o in objects if o["kind"] == "NodeMetric")
    pod = next(o for o in objects if o["kind"] == "Pod")
    relabelled = copy.deepcopy(node)
    relabelled["metadata"].setdefault("labels", {})["zone"] = "moved"
    added = copy.deepcopy(metric)
    added["metadata"]["name"] = "brand-new"
    put = [relabelled, added]
    gone = [object_ref(metric), object_ref(pod)]
    state = [relabelled if o is node else o for o in objects if o is not metric and o is not pod]
    second = record_snapshot(
        first.cluster,
        [*state, added],
        NOW + timedelta(minutes=1),
        SnapshotChanges(first.pk, put, gone),
    )
    assert second.keyframe_id == first.pk
    kinds = objects_of_kinds(second, KINDS)
    assert kinds == picked(second)
    assert relabelled in kinds and added in kinds and metric not in kinds
