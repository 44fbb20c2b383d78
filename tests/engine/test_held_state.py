"""The engine state a process holds follows the cluster's refreshes: a new snapshot stored as
changes steps the held one (the same object, answering as a fresh build would), the bindings
made since are decided on the earlier state first, and a keyframe is built anew."""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

import pytest

from policy.clusters import engine as held
from policy.clusters import snapshot_kinds
from policy.clusters.models import ClusterSnapshot
from policy.clusters.object_changes import SnapshotChanges, object_ref
from policy.clusters.services import load_demo_cluster, record_snapshot
from policy.clusters.snapshot_chains import materialize
from policy.core.choices import DecisionSource
from policy.decisions.models import PlacementDecision
from policy.decisions.services import after_refresh
from policy.sync.demo import drift_demo_clusters
from scoring.snapshot import Snapshot
from tests.conftest import NOW, engine_decision
from tests.scoring.builders import make_container, make_pod

pytestmark = pytest.mark.django_db


def probe() -> dict[str, Any]:
    return make_pod("probe", containers=[make_container("app", {"cpu": "500m"})])


def refreshed(first: ClusterSnapshot) -> tuple[ClusterSnapshot, str, str]:
    """A refresh of ``first``: one pending pod bound to a node, one node relabelled."""
    objects = materialize(first)
    pod = next(
        o
        for o in objects
        if o["kind"] == "Pod"
        and not o["spec"].get("nodeName")
        and o["spec"].get("schedulerName", "default-scheduler") == "default-scheduler"
    )
    node = next(o for o in objects if o["kind"] == "Node")
    bound, relabelled = copy.deepcopy(pod), copy.deepcopy(node)
    bound["spec"]["nodeName"] = node["metadata"]["name"]
    bound["status"] = {"phase": "Running"}
    relabelled["metadata"].setdefault("labels", {})["zone"] = "stepped"
    state = [bound if o is pod else relabelled if o is node else o for o in objects]
    changes = SnapshotChanges(first.pk, [bound, relabelled], [])
    second = record_snapshot(first.cluster, state, NOW + timedelta(minutes=1), changes)
    assert second.keyframe_id == first.pk
    return second, bound["metadata"]["name"], object_ref(relabelled)[2]


def test_a_refresh_steps_the_held_snapshot_and_answers_as_a_fresh_build() -> None:
    first = load_demo_cluster(nodes=12, now=NOW)
    state = held.snapshot_for(first)
    second, bound, _ = refreshed(first)
    stepped = held.snapshot_for(ClusterSnapshot.snapshots.summaries().get(pk=second.pk))
    assert stepped is state  # stepped in place, not built
    answer = engine_decision(second, probe()).to_dict()
    held.clear_caches()
    assert engine_decision(second, probe()).to_dict() == answer  # as built from scratch
    recorded = PlacementDecision.objects.filter(source=DecisionSource.CLUSTER, pod_name=bound)
    assert recorded.get().snapshot_id == first.pk  # decided on the state before the binding


def test_a_keyframe_is_built_anew() -> None:
    first = load_demo_cluster(nodes=12, now=NOW)
    state = held.snapshot_for(first)
    again = record_snapshot(first.cluster, materialize(first), NOW + timedelta(minutes=1))
    assert again.keyframe_id is None
    assert held.snapshot_for(again) is not state


def test_a_keyframe_after_the_held_snapshot_records_the_bindings_made_since(
    monkeypatch: Any,
) -> None:
    first = load_demo_cluster(nodes=12, now=NOW)
    state = held.snapshot_for(first)
    objects = materialize(first)
    stepped, bound, _ = refreshed(first)
    # The same state stored again as a keyframe (a refresh that listed every kind anew).
    again = record_snapshot(first.cluster, materialize(stepped), NOW + timedelta(minutes=2))
    ClusterSnapshot.snapshots.filter(pk=stepped.pk).delete()  # first is the one before
    assert again.keyframe_id is None
    building = Snapshot.from_objects.__func__  # type: ignore[attr-defined]
    held_while_building: list[bool] = []

    def from_objects(cls: Any, *args: Any, **kwargs: Any) -> Snapshot:
        held_while_building.append(held._snapshots.get(held.snapshot_key(first)) is not None)
        return building(cls, *args, **kwargs)  # type: ignore[no-any-return]

    monkeypatch.setattr(Snapshot, "from_objects", classmethod(from_objects))
    assert held.snapshot_for(again) is not state
    assert held_while_building == [False]  # the earlier state went before the build
    recorded = PlacementDecision.objects.filter(source=DecisionSource.CLUSTER, pod_name=bound)
    assert recorded.get().snapshot_id == first.pk
    assert len(objects) == len(materialize(again))


def test_after_a_refresh_the_engine_reads_no_stored_object_again(monkeypatch: Any) -> None:
    first = load_demo_cluster(nodes=12, now=NOW)
    held.snapshot_for(first)
    second, bound, _ = refreshed(first)

    def read_objects(self: ClusterSnapshot) -> None:
        raise AssertionError(f"snapshot {self.pk}'s objects read again")

    monkeypatch.setattr(ClusterSnapshot, "read_objects", read_objects)
    counts = after_refresh(first.cluster_id)
    assert counts is not None and counts["pending"] > 0
    assert counts["evaluated"] == counts["pending"] - counts["errors"] > 0
    worker = PlacementDecision.objects.filter(source=DecisionSource.WORKER)
    assert set(worker.values_list("snapshot_id", flat=True)) == {second.pk}
    assert PlacementDecision.objects.filter(source=DecisionSource.CLUSTER, pod_name=bound).exists()


def test_a_demo_drift_is_stored_as_changes_and_steps_the_held_state(monkeypatch: Any) -> None:
    first = load_demo_cluster(nodes=12, now=NOW)
    state = held.snapshot_for(first)

    def read_objects(self: ClusterSnapshot) -> None:
        raise AssertionError(f"every object of snapshot {self.pk} read for a drift step")

    with monkeypatch.context() as patched:
        if snapshot_kinds.supported():  # PostgreSQL: only the Nodes and NodeMetrics are read
            patched.setattr(ClusterSnapshot, "read_objects", read_objects)
        [drifted] = drift_demo_clusters(now=NOW + timedelta(minutes=1))
    carried = ("node_count", "pod_count", "pending_pod_count", "node_metric_count")
    rows = ClusterSnapshot.snapshots.filter(pk__in=[first.pk, drifted]).order_by("pk")
    before, after = rows.values("scheduling_failures", *carried)
    assert before == after and before["node_count"] == 12
    second = ClusterSnapshot.snapshots.summaries().get(pk=drifted)
    assert second.keyframe_id == first.pk
    assert {o["kind"] for o in ClusterSnapshot.snapshots.get(pk=drifted).changes["put"]} == {
        "NodeMetric"
    }
    assert held.snapshot_for(second) is state
    answer = engine_decision(second, probe()).to_dict()
    held.clear_caches()
    assert engine_decision(second, probe()).to_dict() == answer
