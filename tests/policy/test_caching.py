"""The per-process build cache: one build per key, other keys readable and buildable meanwhile,
and the engine's snapshot and engine caches are that cache. Built snapshots are kept out of the
cyclic collector's passes while cached, and given back to it when dropped."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from benchmarks.engine import EXTENDED_PROFILE
from policy.clusters import engine
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.clusters.services import record_snapshot
from policy.core.caching import BuildCache
from scoring.synthetic import generate_cluster


def wait_until(check: Callable[[], object], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def start_blocked_build(cache: BuildCache, key: object) -> tuple[threading.Event, list[str]]:
    """Start building ``key`` in threads that wait for the returned event; returns once the
    single build is under way."""
    release = threading.Event()
    builds: list[str] = []

    def slow() -> str:
        builds.append("slow")
        release.wait(10)
        return "built"

    for _ in range(3):
        threading.Thread(target=lambda: cache.get_or_build(key, slow), daemon=True).start()
    wait_until(lambda: builds)
    return release, builds


def test_one_build_per_key_and_other_keys_stay_readable() -> None:
    cache = BuildCache(size=4)
    cache.get_or_build("ready", lambda: "r")
    release, builds = start_blocked_build(cache, "slow")
    assert cache.get("ready") == "r"  # not blocked by the build in progress
    assert cache.get("slow") is None
    release.set()
    wait_until(lambda: cache.get("slow") == "built")
    assert builds == ["slow"]


def test_other_keys_build_while_one_is_being_built() -> None:
    cache = BuildCache(size=4)
    release, _ = start_blocked_build(cache, "slow")
    done: list[str] = []
    other = threading.Thread(target=lambda: done.append(cache.get_or_build("other", lambda: "o")))
    other.start()
    other.join(5)
    release.set()
    assert done == ["o"]


def test_a_failed_build_lets_the_next_caller_try_again() -> None:
    cache = BuildCache(size=2)

    def broken() -> str:
        raise ValueError("unreadable")

    with pytest.raises(ValueError):
        cache.get_or_build("k", broken)
    assert cache.get_or_build("k", lambda: "fixed") == "fixed"


def test_the_least_recently_used_value_goes_first() -> None:
    cache = BuildCache(size=2)
    for key in ("a", "b"):
        cache.get_or_build(key, lambda key=key: key.upper())
    cache.get("a")
    cache.get_or_build("c", lambda: "C")
    assert [cache.get(key) for key in ("a", "b", "c")] == ["A", None, "C"]


@pytest.mark.parametrize("name", ["_snapshots", "_engines"])
def test_the_engine_caches_build_outside_their_lock(name: str) -> None:
    """A snapshot build of a big cluster takes seconds: other lookups must not wait behind it."""
    cache = getattr(engine, name)
    assert isinstance(cache, BuildCache)
    try:
        release, _ = start_blocked_build(cache, ("blocked", name))
        looked_up: list[object] = []
        other = threading.Thread(
            target=lambda: looked_up.append(cache.get_or_build(("other", name), lambda: 1))
        )
        other.start()
        other.join(5)
        release.set()
        assert looked_up == [1]
    finally:
        engine.clear_caches()


def test_dropped_values_are_handed_to_on_evict() -> None:
    dropped: list[str] = []
    cache = BuildCache(size=2, on_evict=dropped.append)
    for key in ("a", "b", "c"):
        cache.get_or_build(key, lambda key=key: key.upper())
    assert dropped == ["A"]
    cache.clear()
    assert dropped == ["A", "B", "C"]


def _tracked(obj: object) -> bool:
    """Whether the cyclic collector's generations hold ``obj`` (frozen objects are not)."""
    return any(o is obj for o in gc.get_objects())


def _stored(name: str) -> ClusterSnapshot:
    """A small stored snapshot of a new cluster, with no engine state held yet."""
    cluster = Cluster.objects.create(name=name, kind="kubeconfig", kubeconfig_path="/k")
    taken = datetime(2026, 11, 25, 10, 0, tzinfo=UTC)
    objects = generate_cluster(nodes=4, pods_per_node=2, pending_pods=1, seed=1, now=taken)
    stored = record_snapshot(cluster, objects, taken)
    engine.clear_caches()
    return stored


@pytest.mark.django_db
def test_a_cached_snapshot_is_frozen_until_dropped() -> None:
    stored = _stored("frozen")
    try:
        snapshot = engine.snapshot_for(stored)
        assert gc.get_freeze_count() > 0
        assert not _tracked(snapshot.nodes[0])
        assert engine.snapshot_for(stored) is snapshot
    finally:
        engine.clear_caches()
    assert gc.get_freeze_count() == 0
    assert _tracked(snapshot.nodes[0])  # collectable again once it goes


@pytest.mark.django_db
def test_plugin_state_built_by_an_evaluation_is_frozen_with_its_snapshot() -> None:
    stored = _stored("frozen-state")
    try:
        snapshot = engine.snapshot_for(stored)
        scheduler = engine.engine_for(EXTENDED_PROFILE)
        pod = snapshot.pending[0]
        before, frozen = snapshot.states_built, gc.get_freeze_count()
        engine.evaluate_on(stored, scheduler, pod)
        assert snapshot.states_built > before  # LoadAware's state, among others
        assert gc.get_freeze_count() > frozen
        frozen = gc.get_freeze_count()
        engine.evaluate_on(stored, scheduler, pod)  # nothing new built: nothing frozen
        assert gc.get_freeze_count() == frozen
    finally:
        engine.clear_caches()
    assert gc.get_freeze_count() == 0
