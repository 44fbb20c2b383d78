"""Snapshots stored as changes since the newest one give back exactly the objects they were
given; chains stay short, stale bases make keyframes, and pruning keeps what kept ones need."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from policy.clusters import snapshot_chains
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.clusters.object_changes import SnapshotChanges, object_ref
from policy.clusters.services import prune_snapshots, record_snapshot
from scoring.synthetic import generate_cluster

pytestmark = pytest.mark.django_db
T0 = datetime(2026, 11, 25, 10, 0, tzinfo=UTC)
Json = dict[str, Any]


@pytest.fixture
def cluster() -> Cluster:
    return Cluster.objects.create(name="chains", kind="kubeconfig", kubeconfig_path="/k")


@pytest.fixture
def objects() -> list[Json]:
    return generate_cluster(nodes=20, pods_per_node=3, pending_pods=2, nrt_nodes=1, seed=3, now=T0)


def changed(objects: list[Json], step: int) -> tuple[list[Json], list[Json], list[Json]]:
    """A new state: one node relabelled, one pod gone, one pod added; (state, put, deleted)."""
    state = copy.deepcopy(objects)
    nodes = [o for o in state if o["kind"] == "Node"]
    pods = [o for o in state if o["kind"] == "Pod"]
    node = nodes[step % len(nodes)]
    node["metadata"].setdefault("labels", {})["step"] = str(step)
    gone = pods[step % len(pods)]
    state.remove(gone)
    added = copy.deepcopy(pods[(step + 1) % len(pods)])
    added["metadata"]["name"] = f"added-{step}"
    state.append(added)
    return state, [node, added], [gone]


def as_set(objects: list[Json]) -> dict[tuple[str, str, str], Json]:
    return {object_ref(o): o for o in objects}


def store_changes(
    cluster: Cluster, state: list[Json], put: list[Json], gone: list[Json], since: int, at: int
) -> ClusterSnapshot:
    changes = SnapshotChanges(since, put, [object_ref(o) for o in gone])
    return record_snapshot(cluster, state, T0 + timedelta(minutes=at), changes)


def reloaded(snapshot: ClusterSnapshot) -> ClusterSnapshot:
    return ClusterSnapshot.snapshots.summaries().get(pk=snapshot.pk)


def test_a_chain_of_changes_gives_back_every_state(cluster: Cluster, objects: list[Json]) -> None:
    first = record_snapshot(cluster, objects, T0)
    assert first.keyframe_id is None
    states, stored, previous = [objects], [first], first
    for step in range(1, 5):
        state, put, gone = changed(states[-1], step)
        snapshot = store_changes(cluster, state, put, gone, previous.pk, step)
        assert snapshot.keyframe_id == first.pk and snapshot.stored_objects == []
        assert len(snapshot.changes["put"]) == 2 and len(snapshot.changes["delete"]) == 1
        states.append(state)
        stored.append(snapshot)
        previous = snapshot
    for state, snapshot in zip(states, stored, strict=True):
        fresh = reloaded(snapshot)
        assert as_set(fresh.objects) == as_set(state)
        assert fresh.node_count == sum(o["kind"] == "Node" for o in state)


def test_changes_since_anything_but_the_newest_snapshot_make_a_keyframe(
    cluster: Cluster, objects: list[Json]
) -> None:
    first = record_snapshot(cluster, objects, T0)
    record_snapshot(cluster, objects, T0 + timedelta(minutes=1))  # another process stored
    state, put, gone = changed(objects, 1)
    late = store_changes(cluster, state, put, gone, first.pk, 2)
    assert late.keyframe_id is None and as_set(reloaded(late).objects) == as_set(state)


def test_chains_are_bounded_by_length_and_by_the_share_changed(
    cluster: Cluster, objects: list[Json], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot_chains, "MAX_CHAIN", 2)
    monkeypatch.setattr(snapshot_chains, "FEW_CHANGES", 10)
    previous = record_snapshot(cluster, objects, T0)
    keyframes = [previous.pk]
    state = objects
    for step in range(1, 7):
        state, put, gone = changed(state, step)
        previous = store_changes(cluster, state, put, gone, previous.pk, step)
        if previous.keyframe_id is None:
            keyframes.append(previous.pk)
    assert len(keyframes) == 3  # a keyframe, two changes, a keyframe, two changes, ...
    everything = SnapshotChanges(previous.pk, state, [])  # all objects changed
    whole = record_snapshot(cluster, state, T0 + timedelta(minutes=9), everything)
    assert whole.keyframe_id is None


def test_pruning_keeps_what_the_kept_snapshots_need(
    cluster: Cluster, objects: list[Json], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot_chains, "MAX_CHAIN", 3)
    previous = record_snapshot(cluster, objects, T0)
    states = {previous.pk: objects}
    state = objects
    for step in range(1, 9):  # chains: [1 2 3 4] [5 6 7 8] [9]
        state, put, gone = changed(state, step)
        previous = store_changes(cluster, state, put, gone, previous.pk, step)
        states[previous.pk] = state
    ids = sorted(states)
    prune_snapshots(keep=3)  # the newest three: ids 7, 8, 9, so chain [5 6 7 8] stays whole
    left = sorted(ClusterSnapshot.snapshots.filter(cluster=cluster).values_list("id", flat=True))
    assert left == ids[4:]
    for pk in left:
        snapshot = ClusterSnapshot.snapshots.summaries().get(pk=pk)
        assert as_set(snapshot.objects) == as_set(states[pk])
    prune_snapshots(keep=1)
    assert list(ClusterSnapshot.snapshots.filter(cluster=cluster).values_list("id", flat=True)) == [
        ids[-1]
    ]


def test_a_cluster_goes_with_all_its_snapshots(cluster: Cluster, objects: list[Json]) -> None:
    first = record_snapshot(cluster, objects, T0)
    state, put, gone = changed(objects, 1)
    store_changes(cluster, state, put, gone, first.pk, 1)
    cluster.delete()
    assert not ClusterSnapshot.snapshots.exists()


def test_objects_read_one_at_a_time_are_the_objects_read_whole(
    cluster: Cluster, objects: list[Json]
) -> None:
    """``iter_objects`` decodes a keyframe's JSON text item by item (the engine builds from it
    without holding every object); a chain's snapshot reads as before. Both give what
    ``read_objects`` gives, in order, on SQLite and PostgreSQL alike."""
    keyframe = reloaded(record_snapshot(cluster, objects, T0))
    assert keyframe.keyframe_id is None
    assert list(keyframe.iter_objects()) == keyframe.read_objects() == objects
    state, put, gone = changed(objects, 1)
    chained = reloaded(store_changes(cluster, state, put, gone, keyframe.pk, 1))
    assert chained.keyframe_id == keyframe.pk
    assert list(chained.iter_objects()) == chained.read_objects()
    assert as_set(list(chained.iter_objects())) == as_set(state)
