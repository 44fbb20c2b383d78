"""The bridge between stored data and the engine: snapshots and configurations → decisions.

Where the engine tier holds a cluster's state (``policy.engine``), the engine snapshot of its
newest stored snapshot is kept, with every plugin's state. Building one from a large cluster
takes seconds, so a new stored snapshot that is changes against the one held (a refresh's
chain, ``snapshot_chains``) steps the held one (``Snapshot.apply_changes``: what changed costs,
not the cluster's size); only a first snapshot, a keyframe or a gap is built from the stored
objects, after the state it replaces is let go. Hooks (:func:`before_step`) see the earlier
state before it gives way (the bindings made since are decided on it). Older snapshots asked
for are built and cached beside it. Engines are cached by the digest of their configuration
document.

A built snapshot is millions of long-lived objects. Left to the cyclic collector, every pass
over the old generations walks them all again (a 5,000-node cluster: 0.5-2 s a pass, several
passes in the request that built it), so once built they are frozen out of its passes
(``gc.freeze``). Dropping a snapshot from the cache unfreezes everything, so any reference
cycle among its objects is still collected.
"""

from __future__ import annotations

import gc
import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from policy.clusters.models import Cluster, ClusterSnapshot
from policy.clusters.snapshot_chains import materialize
from policy.core.caching import BuildCache
from scoring import Decision, Engine, Pod, Snapshot, Target, gc_paused, load_configuration

logger = logging.getLogger(__name__)
_snapshots = BuildCache(size=3, on_evict=lambda _: gc.unfreeze())
_engines = BuildCache(size=16)
HELD_PER_CLUSTER = 2
Json = Mapping[str, Any]
StepHook = Callable[[ClusterSnapshot, ClusterSnapshot, Snapshot, Iterable[Json]], None]
_before_step: list[StepHook] = []


def before_step(hook: StepHook) -> StepHook:
    """Run ``hook(previous, current, held, pods)`` while the engine state of ``previous``
    (``held``) is still held, before it gives way to ``current``'s: ``pods`` are the pods of
    ``current`` that changed (a step) or all of them (a keyframe built after it)."""
    _before_step.append(hook)
    return hook


def _run_hooks(
    previous: ClusterSnapshot, current: ClusterSnapshot, held: Snapshot, pods: Iterable[Json]
) -> None:
    for hook in _before_step:
        try:
            hook(previous, current, held, pods)
        except Exception:  # the step goes on: the hook's work is not the state's
            logger.exception("before replacing snapshot %s by %s", previous.pk, current.pk)


def document_digest(document: Mapping[str, Any] | None) -> str:
    """SHA-256 of a configuration document in canonical JSON ("" digest for the defaults)."""
    canonical = json.dumps(document or {}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def snapshot_for(stored: ClusterSnapshot) -> Snapshot:
    """The engine snapshot of a stored one: held, stepped from the one held before it, or
    built."""
    return _snapshots.get_or_build(snapshot_key(stored), lambda: _step_or_build(stored))


def _step_or_build(stored: ClusterSnapshot) -> Snapshot:
    previous = _predecessor(stored)
    held = _snapshots.get(snapshot_key(previous)) if previous is not None else None
    if previous is None or held is None:
        _snapshots.size = max(3, HELD_PER_CLUSTER * Cluster.objects.count())
        return _build_after(stored)
    changes = stored.changes or {}
    _run_hooks(previous, stored, held, [o for o in changes.get("put") or [] if _is_pod(o)])
    _snapshots.pop(snapshot_key(previous))
    held.apply_changes(
        put=changes.get("put") or [],
        delete=[tuple(ref) for ref in changes.get("delete") or []],
        warn=lambda _: None,
    )
    return held


def _predecessor(stored: ClusterSnapshot) -> ClusterSnapshot | None:
    """The snapshot ``stored`` is the changes since (None: it is a keyframe)."""
    if stored.keyframe_id is None:
        return None
    previous = _before(stored)
    if previous is None or stored.keyframe_id not in (previous.pk, previous.keyframe_id):
        return None
    return previous


def _before(stored: ClusterSnapshot) -> ClusterSnapshot | None:
    """The cluster's snapshot stored just before ``stored``."""
    earlier = ClusterSnapshot.snapshots.summaries().filter(
        cluster_id=stored.cluster_id, pk__lt=stored.pk
    )
    return earlier.order_by("-pk").first()


def _build_after(stored: ClusterSnapshot) -> Snapshot:
    """Built from the stored objects. The hooks see them first, with the cluster's snapshot
    before it if held, which is then let go before the build: one state per cluster, never
    two at once."""
    previous = _before(stored)
    held = _snapshots.get(snapshot_key(previous)) if previous is not None else None
    if previous is None or held is None:
        return _build(stored.iter_objects())  # no hook to show them: read one at a time
    objects = materialize(stored)
    # The scheduler's informer drops finished pods: so does the state the hooks compare.
    pods = [o for o in objects if _is_pod(o) and not _finished(o)]
    _run_hooks(previous, stored, held, pods)
    _snapshots.pop(snapshot_key(previous))
    del held
    return _build(objects)


def _is_pod(obj: Json) -> bool:
    return isinstance(obj, Mapping) and obj.get("kind") == "Pod"


def _finished(pod: Json) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _build(objects: Iterable[Json]) -> Snapshot:
    """Built from a snapshot's objects."""
    # Reading 50,000 objects' JSON makes as many dicts: without the cyclic collector's passes
    # over them, 4x faster (5,000 nodes: 1.8 s -> 0.4 s).
    with gc_paused():
        snapshot = Snapshot.from_objects(objects, warn=lambda _: None)
        gc.freeze()  # still paused: its objects never enter the collector's generations
    return snapshot


def snapshot_key(stored: ClusterSnapshot) -> tuple[int, str]:
    """Cache key of a stored snapshot: its id plus creation time, since SQLite reuses the ids
    of deleted rows and a cache keyed by id alone could serve another snapshot's objects."""
    return (stored.pk, stored.created.isoformat())


def engine_for(document: Mapping[str, Any] | None, target: Target | None = None) -> Engine:
    """An engine for a KubeSchedulerConfiguration document (None: kube-scheduler defaults),
    defaulted and checked for ``target`` (None: inferred from the document).

    Raises ``scoring.errors.ConfigurationInvalid`` when the document does not validate.
    """
    digest = document_digest(document) + (f"@{target}" if target is not None else "")
    return _engines.get_or_build(
        digest,
        lambda: Engine(load_configuration(document, target=target) if document else None),
    )


def evaluate_on(stored: ClusterSnapshot, engine: Engine, pod: Pod) -> Decision:
    """``engine``'s decision for ``pod`` on ``stored``, with "now" the time it was taken: a
    decision depends only on what was stored (NodeMetric freshness as it was then), so it can
    be made again exactly. A first evaluation builds the plugins' per-node state, with the
    cyclic collector paused (1.7 -> 0.9 s on 5,000 nodes), and frozen out of its passes as the
    snapshot is: left in the old generation, its objects made every full pass cost 0.15 s at
    5,000 nodes, and so rare that a request's garbage piled up for dozens of requests
    (docs/benchmarks.md)."""
    snapshot = snapshot_for(stored)
    built = snapshot.states_built
    with gc_paused():
        decision = engine.evaluate(pod, snapshot, stored.taken_at)
        if snapshot.states_built != built:
            gc.freeze()
    return decision


def clear_caches() -> None:
    """Forget cached snapshots and engines (tests; memory pressure)."""
    for cache in (_snapshots, _engines):
        cache.clear()
    gc.unfreeze()
