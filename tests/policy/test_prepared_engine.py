"""Engine snapshots the worker prepares (policy.clusters.prepared_engine): loaded back, they
decide exactly as a snapshot built from the objects, and a row this deployment's code did not
sign, or another version of the engine wrote, is never loaded."""

from __future__ import annotations

from typing import Any

import pytest

from policy.clusters import engine as cluster_engine
from policy.clusters import prepared_engine
from policy.clusters.models import ClusterSnapshot, PreparedEngineSnapshot
from policy.clusters.services import load_demo_cluster
from policy.decisions import evaluation
from policy.decisions.preparation import prepare_engine, prepare_newest_engine
from policy.policies.demo import seed_demo_policies
from scoring.objects import parse_pod
from scoring.snapshot import Snapshot
from tests.conftest import NOW
from tests.scoring.builders import make_container, make_pod

pytestmark = pytest.mark.django_db

PODS = [
    make_pod("small", containers=[make_container("a", {"cpu": "100m", "memory": "64Mi"})]),
    make_pod("large", containers=[make_container("a", {"cpu": "6", "memory": "8Gi"})]),
    make_pod("huge", containers=[make_container("a", {"cpu": "500"})]),
]


@pytest.fixture
def prepared(demo_snapshot: ClusterSnapshot) -> ClusterSnapshot:
    seed_demo_policies(demo_snapshot.cluster)  # LoadAware, LimitAware and NUMA profiles
    assert prepare_engine(demo_snapshot) > 0
    cluster_engine.clear_caches()
    return demo_snapshot


def test_a_loaded_snapshot_decides_as_one_built_from_the_objects(
    prepared: ClusterSnapshot,
) -> None:
    loaded = prepared_engine.load(prepared)
    assert loaded is not None
    assert loaded._extensions  # the plugins' state came with it
    built = Snapshot.from_objects(prepared.objects, warn=lambda _: None)
    choice = evaluation.choose_configuration(prepared.cluster, None)
    engine = cluster_engine.engine_for(choice.document, choice.target)
    pending = [pod.raw for pod in built.pending]
    assert [pod.raw for pod in loaded.pending] == pending  # kept as JSON text, parsed back
    bound = [pod.raw for pods in built.pods_on_node for pod in pods]
    assert [pod.raw for pods in loaded.pods_on_node for pod in pods] == bound
    for manifest in [*PODS, *pending]:
        for profile in engine.frameworks:
            spec = {**manifest["spec"], "schedulerName": profile}
            pod = parse_pod({**manifest, "spec": spec})
            on_loaded = engine.evaluate(pod, loaded, prepared.taken_at).to_dict()
            assert on_loaded == engine.evaluate(pod, built, prepared.taken_at).to_dict()


def test_an_evaluation_in_a_fresh_process_loads_it_instead_of_building(
    prepared: ClusterSnapshot, monkeypatch: Any
) -> None:
    expected = [evaluation.run(prepared.cluster, pod)[0].to_dict() for pod in PODS]
    cluster_engine.clear_caches()

    def not_built(*args: Any, **kwargs: Any) -> Snapshot:
        raise AssertionError("built from the objects")

    monkeypatch.setattr(Snapshot, "from_objects", not_built)
    assert [evaluation.run(prepared.cluster, pod)[0].to_dict() for pod in PODS] == expected


@pytest.mark.parametrize("damage", ["signature", "payload", "magic"])
def test_a_row_not_signed_here_is_built_instead(
    prepared: ClusterSnapshot, damage: str, caplog: Any
) -> None:
    row = PreparedEngineSnapshot.objects.get(snapshot=prepared)
    data = bytearray(row.data)
    at = {"magic": 0, "signature": 10, "payload": len(data) - 10}[damage]
    data[at] ^= 0xFF
    row.data = bytes(data)
    row.save()
    assert prepared_engine.load(prepared) is None
    assert "not signed here" in caplog.text
    assert evaluation.run(prepared.cluster, PODS[0])[0].selected_node  # built, and evaluated


def test_another_key_or_engine_version_is_not_loaded(
    prepared: ClusterSnapshot, settings: Any, monkeypatch: Any
) -> None:
    settings.SECRET_KEY = "another deployment's key"
    assert prepared_engine.load(prepared) is None
    settings.SECRET_KEY = "x" * 50
    assert prepare_engine(prepared) > 0
    assert prepared_engine.load(prepared) is not None
    monkeypatch.setattr(prepared_engine, "fingerprint", lambda: "another engine")
    assert prepared_engine.load(prepared) is None
    assert not prepared_engine.is_prepared(prepared)


def test_bytes_that_do_not_unpickle_are_built_instead(
    prepared: ClusterSnapshot, caplog: Any
) -> None:
    packed = prepared_engine.zstandard.ZstdCompressor().compress(b"not a pickle")
    row = PreparedEngineSnapshot.objects.get(snapshot=prepared)
    row.data = prepared_engine.MAGIC + prepared_engine._mac(packed) + packed
    row.save()
    assert prepared_engine.load(prepared) is None
    assert "does not load" in caplog.text


def test_only_the_newest_snapshot_of_a_cluster_is_kept_prepared(
    prepared: ClusterSnapshot, settings: Any
) -> None:
    settings.PREPARED_ENGINE_NODES = 12
    newer = load_demo_cluster(nodes=12, now=NOW)
    assert prepare_newest_engine(newer.cluster_id) > 0
    assert prepare_newest_engine(newer.cluster_id) == 0  # prepared already
    rows = PreparedEngineSnapshot.objects.values_list("snapshot_id", flat=True)
    assert list(rows) == [newer.pk]


def test_storing_a_snapshot_of_a_large_cluster_prepares_it(
    db: None, run_on_commit: Any, settings: Any
) -> None:
    settings.PREPARED_ENGINE_NODES = 12
    with run_on_commit():
        stored = load_demo_cluster(nodes=12, now=NOW)
    assert prepared_engine.is_prepared(stored)
    settings.PREPARED_ENGINE_NODES = 13
    with run_on_commit():
        smaller = load_demo_cluster(name="small", nodes=12, now=NOW)
    assert not prepared_engine.is_prepared(smaller)
    assert prepare_newest_engine(smaller.cluster_id) == 0


def test_a_loaded_pod_pickles_again_with_its_raw_object(prepared: ClusterSnapshot) -> None:
    import pickle

    loaded = prepared_engine.load(prepared)
    assert loaded is not None
    untouched, read = loaded.pods_on_node[0][0], loaded.pods_on_node[0][1]
    assert read.raw["metadata"]["name"] == read.name
    for pod in (untouched, read):
        again = pickle.loads(pickle.dumps(pod))
        assert again.raw == pod.raw and again.key == pod.key
