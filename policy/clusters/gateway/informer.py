"""An informer-style cache of a cluster's objects: list each kind once, then watch.

The worker's refresh asks :func:`informer_for` for a cluster's objects. The first refresh in a
process lists every kind (:func:`~policy.clusters.gateway.readback.list_objects`, page by
page); later ones read only the watch events after the resourceVersion the cache holds, so a
refresh costs what changed, not the cluster's size. As client-go's reflector does
(``staging/src/k8s.io/client-go/tools/cache/reflector.go``), a watch answered with 410 Gone (the
version has left the apiserver's watch cache) lists that kind again, and each applied event
moves the kind's resourceVersion, so the cache always holds a state the cluster was in.

A Celery task cannot hold a watch open between runs, so each refresh *drains* the watch: it takes
the events the apiserver sends at once and stops after :data:`IDLE_SECONDS` without one (or when
the server ends the watch after :data:`WATCH_SECONDS`). Events not yet delivered are read by the
next refresh. Kinds are drained in parallel, one thread each. Every worker process has its own
cache (prefork children share nothing): a process's first refresh of a cluster lists.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime

from policy.clusters.gateway.connection import Connection, Json
from policy.clusters.gateway.errors import PermanentError, ResourceVersionExpired
from policy.clusters.gateway.readback import (
    SNAPSHOT_KINDS,
    Kind,
    Readback,
    list_objects,
    object_digest,
    signature_of,
    slim,
    watch,
)

logger = logging.getLogger(__name__)

IDLE_SECONDS = 0.3  # no event for this long: the backlog is drained
WATCH_SECONDS = 10  # the server ends one drain's watch after this, however busy the kind is

ObjectKey = tuple[str, str]  # (namespace, name)
ObjectRef = tuple[str, str, str]  # (kind, namespace, name)


def _version(obj: Json) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


def _key(obj: Json) -> ObjectKey:
    metadata = obj.get("metadata") or {}
    return str(metadata.get("namespace") or ""), str(metadata.get("name") or "")


@dataclass
class KindCache:
    """One kind's objects as of ``resource_version``."""

    kind: Kind
    objects: dict[ObjectKey, Json] = field(default_factory=dict)
    resource_version: str = ""
    listed: bool = False
    missing: bool = False  # its CRD is not served (or reading it is not allowed)
    watchable: bool = True  # False once a watch was refused (RBAC without the watch verb)
    digest_sum: int = 0  # sum of object_digest over objects: kept per event

    def relist(self, conn: Connection, touched: set[ObjectKey]) -> None:
        """List the kind again, adding to ``touched`` the key of every object that differs
        from what the cache held (added, changed or gone)."""
        result = list_objects(conn, self.kind)
        fresh = {_key(item): slim(item, self.kind) for item in result.items}
        before = {key: _version(obj) for key, obj in self.objects.items()}
        touched.update(key for key, obj in fresh.items() if before.get(key) != _version(obj))
        touched.update(key for key in before if key not in fresh)
        self.objects = fresh
        self.digest_sum = sum(object_digest(obj) for obj in self.objects.values())
        self.resource_version = result.resource_version
        self.missing = result.missing
        self.listed = True

    def _put(self, obj: Json) -> None:
        self._remove(_key(obj))
        self.objects[_key(obj)] = slim(obj, self.kind)
        self.digest_sum += object_digest(obj)

    def _remove(self, key: ObjectKey) -> bool:
        old = self.objects.pop(key, None)
        if old is None:
            return False
        self.digest_sum -= object_digest(old)
        return True

    def drain(
        self, conn: Connection, touched: set[ObjectKey], *, idle_seconds: float = IDLE_SECONDS
    ) -> int:
        """Apply the watch events after ``resource_version``, adding the key of each changed
        object to ``touched``; the number of changes applied."""
        applied = 0
        events = watch(
            conn,
            self.kind,
            self.resource_version,
            timeout_seconds=WATCH_SECONDS,
            idle_seconds=idle_seconds,
        )
        for event in events:
            if event.type in ("ADDED", "MODIFIED"):
                self._put(event.object)
                touched.add(_key(event.object))
                applied += 1
            elif event.type == "DELETED" and self._remove(_key(event.object)):
                touched.add(_key(event.object))
                applied += 1
            if event.resource_version:
                self.resource_version = event.resource_version
        return applied


class ClusterInformer:
    """The objects of one cluster, kept current by list + watch."""

    def __init__(self, kinds: tuple[Kind, ...] = SNAPSHOT_KINDS) -> None:
        self.caches = {kind.kind: KindCache(kind) for kind in kinds}
        self._lock = threading.Lock()
        # The snapshot stored from this cache most recently, and the objects changed since
        # (None: not known, a kind was listed since): what a refresh can store as changes.
        self.stored: int | None = None
        self._touched: dict[str, set[ObjectKey]] | None = None

    def read(
        self,
        conn: Connection,
        *,
        relist: Collection[str] = (),
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> Readback:
        """Bring every kind up to date and return the objects as one :class:`Readback`,
        with their ``version_signature`` (kept per event, not recomputed over every object).

        The kinds in ``relist`` are listed instead of watched: a list reads etcd itself, while
        a watch is served from the API server's watch cache, which can be a moment behind a
        write that was just acknowledged (read what was just written by listing it).
        """
        with self._lock:
            started = clock()
            caches = list(self.caches.values())
            touched: dict[str, set[ObjectKey]] = {c.kind.kind: set() for c in caches}

            def update(cache: KindCache) -> int:
                keys = touched[cache.kind.kind]
                if cache.kind.kind in relist:
                    cache.relist(conn, keys)
                    return -1
                return _update(cache, conn, keys)

            with ThreadPoolExecutor(max_workers=len(caches)) as pool:
                outcomes = list(pool.map(update, caches))
            self._remember(touched)
            objects = [obj for cache in caches for obj in cache.objects.values()]
            back = Readback(
                objects,
                {c.kind.kind: c.resource_version for c in caches if not c.missing},
                [c.kind.kind for c in caches if c.missing],
                started,
                clock(),
                {c.kind.kind: len(c.objects) for c in caches},
            )
            back.signature = signature_of(sum(c.digest_sum for c in caches))
            back.changes = sum(max(n, 0) for n in outcomes)
            back.listed = [c.kind.kind for c, n in zip(caches, outcomes, strict=True) if n < 0]
            return back

    def _remember(self, touched: dict[str, set[ObjectKey]]) -> None:
        if self._touched is None:  # nothing stored from this cache yet
            return
        for kind, keys in touched.items():
            self._touched.setdefault(kind, set()).update(keys)

    def changed_since_stored(self) -> tuple[int, dict[ObjectRef, Json | None]] | None:
        """(snapshot id, ref → object now or None if deleted) for every object changed since
        :attr:`stored`; None when nothing was stored from this cache yet."""
        if self.stored is None or self._touched is None:
            return None
        changed: dict[ObjectRef, Json | None] = {}
        for kind, keys in self._touched.items():
            objects = self.caches[kind].objects
            for key in keys:
                changed[(kind, *key)] = objects.get(key)
        return self.stored, changed

    def mark_stored(self, snapshot_id: int) -> None:
        """The objects as last read are now snapshot ``snapshot_id``."""
        self.stored = snapshot_id
        self._touched = {}


def _update(cache: KindCache, conn: Connection, touched: set[ObjectKey]) -> int:
    """Drain ``cache``'s watch (the number of changes), or list it (-1) when it has no
    version to watch from, the version expired, or watching it is not allowed."""
    if not cache.listed or cache.missing or not cache.watchable:
        cache.relist(conn, touched)  # a missing CRD may have been installed since
        return -1
    try:
        return cache.drain(conn, touched)
    except ResourceVersionExpired:
        logger.info("watch %s: version expired, listing again", cache.kind.kind)
    except PermanentError as exc:
        if exc.status != 403:
            raise
        logger.warning(
            "watching %s is not allowed (%s): it is listed on every refresh instead; "
            "grant the watch verb (deploy/rbac.yaml)",
            cache.kind.kind,
            exc,
        )
        cache.watchable = False
    cache.relist(conn, touched)
    return -1


_informers: dict[tuple[int, str], ClusterInformer] = {}
_registry_lock = threading.Lock()


def informer_for(cluster_id: int, identity: str) -> ClusterInformer:
    """This process's informer for a cluster reached as ``identity`` (server and credentials:
    another server or user may see other objects, so a new identity starts a new cache)."""
    with _registry_lock:
        for key in [k for k in _informers if k[0] == cluster_id and k[1] != identity]:
            del _informers[key]
        informer = _informers.get((cluster_id, identity))
        if informer is None:
            informer = _informers[(cluster_id, identity)] = ClusterInformer()
        return informer


def forget(cluster_id: int | None = None) -> None:
    """Drop the cached objects of one cluster (or all): the next refresh lists."""
    with _registry_lock:
        for key in [k for k in _informers if cluster_id is None or k[0] == cluster_id]:
            del _informers[key]
