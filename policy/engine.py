"""The bridge between stored data and the engine: snapshots and configurations → decisions.

Building a :class:`scoring.snapshot.Snapshot` from a large cluster takes seconds, so each
process keeps the few most recently used ones (keyed by snapshot id; snapshots are immutable
once stored). Engines are cached by the digest of their configuration document.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from policy.models import ClusterSnapshot
from scoring.config import load_configuration
from scoring.engine import Engine
from scoring.snapshot import Snapshot

K = TypeVar("K")
V = TypeVar("V")


class _LRU(OrderedDict[K, V]):
    """A small thread-safe LRU: builders run outside the lock only once per key at a time."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size
        self.lock = threading.Lock()

    def get_or_build(self, key: K, build: Callable[[], V]) -> V:
        with self.lock:
            if key in self:
                self.move_to_end(key)
                return self[key]
            value = build()
            self[key] = value
            while len(self) > self.size:
                self.popitem(last=False)
            return value


_snapshots: _LRU[tuple[int, str], Snapshot] = _LRU(size=3)
_engines: _LRU[str, Engine] = _LRU(size=16)


def document_digest(document: Mapping[str, Any] | None) -> str:
    """SHA-256 of a configuration document in canonical JSON ("" digest for the defaults)."""
    canonical = json.dumps(document or {}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def snapshot_for(stored: ClusterSnapshot) -> Snapshot:
    """The engine snapshot of a stored one; built once per process and reused."""

    def build() -> Snapshot:
        objects = ClusterSnapshot.snapshots.values_list("objects", flat=True).get(pk=stored.pk)
        return Snapshot.from_objects(objects, warn=lambda _: None)

    return _snapshots.get_or_build(snapshot_key(stored), build)


def snapshot_key(stored: ClusterSnapshot) -> tuple[int, str]:
    """Cache key of a stored snapshot: its id plus creation time, since SQLite reuses the ids
    of deleted rows and a cache keyed by id alone could serve another snapshot's objects."""
    return (stored.pk, stored.created.isoformat())


def engine_for(document: Mapping[str, Any] | None) -> Engine:
    """An engine for a KubeSchedulerConfiguration document (None: kube-scheduler defaults).

    Raises ``scoring.errors.ConfigurationInvalid`` when the document does not validate.
    """
    digest = document_digest(document)
    return _engines.get_or_build(
        digest, lambda: Engine(load_configuration(document) if document else None)
    )


def clear_caches() -> None:
    """Forget cached snapshots and engines (tests; memory pressure)."""
    for cache in (_snapshots, _engines):
        with cache.lock:
            cache.clear()
