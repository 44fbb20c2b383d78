"""Reading a cluster back: Nodes, Pods, NodeMetrics and NodeResourceTopologies.

The objects come back as plain JSON dicts, exactly as ``kubectl get -o json`` prints the
items (with ``apiVersion`` and ``kind`` filled in, which list items omit), because that is what
``scoring.Snapshot.from_objects`` and the stored ``ClusterSnapshot`` take. Lists are paginated
(``limit``/``continue``, 500 per page as kubectl does) and each kind records the list's
resourceVersion, from which :func:`watch` continues; a kind whose CRD is not installed (no
Koordinator, no NRT exporter) is reported missing rather than failing the read.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from policy.gateway.connection import Connection, Json
from policy.gateway.errors import NotFoundError, PermanentError, ResourceVersionExpired

logger = logging.getLogger(__name__)

PAGE_SIZE = 500
_LIST_RESTARTS = 3  # a continue token can expire (410) on a busy cluster: start over


@dataclass(frozen=True)
class Kind:
    """A listable kind: its list path, and whether a missing CRD is acceptable."""

    kind: str
    api_version: str
    path: str
    optional: bool = False
    field_selector: str = ""
    # Read when allowed: a 403 (RBAC from before it was read) counts as missing, not an error.
    best_effort: bool = False


NODES = Kind("Node", "v1", "/api/v1/nodes")
# Finished pods hold no resources: the engine and the dashboard ignore them, so skip them.
PODS = Kind(
    "Pod", "v1", "/api/v1/pods", field_selector="status.phase!=Succeeded,status.phase!=Failed"
)
NODE_METRICS = Kind(
    "NodeMetric",
    "slo.koordinator.sh/v1alpha1",
    "/apis/slo.koordinator.sh/v1alpha1/nodemetrics",
    optional=True,
)
TOPOLOGIES = Kind(
    "NodeResourceTopology",
    "topology.node.k8s.io/v1alpha2",
    "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies",
    optional=True,
)
# Why the cluster's scheduler could not place a pod, shown beside the engine's reasons.
SCHEDULING_EVENTS = Kind(
    "Event", "v1", "/api/v1/events", field_selector="reason=FailedScheduling", best_effort=True
)
SNAPSHOT_KINDS = (NODES, PODS, NODE_METRICS, TOPOLOGIES, SCHEDULING_EVENTS)


@dataclass
class ListResult:
    kind: Kind
    items: list[Json]
    resource_version: str
    missing: bool = False  # the kind's CRD is not installed


def list_objects(
    conn: Connection,
    kind: Kind,
    *,
    label_selector: str = "",
    page_size: int = PAGE_SIZE,
) -> ListResult:
    """Every object of ``kind``, page by page; restarts if a continue token expires."""
    for restart in range(_LIST_RESTARTS):
        try:
            return _list_pages(conn, kind, label_selector, page_size)
        except ResourceVersionExpired:
            logger.info("listing %s: continue token expired, restart %d", kind.kind, restart + 1)
        except NotFoundError:
            if not kind.optional:
                raise
            return ListResult(kind, [], "", missing=True)
        except PermanentError as exc:
            if not (kind.best_effort and exc.status == 403):
                raise
            logger.warning("listing %s is not allowed (%s); read without it", kind.kind, exc)
            return ListResult(kind, [], "", missing=True)
    return _list_pages(conn, kind, label_selector, page_size)


def _list_pages(conn: Connection, kind: Kind, label_selector: str, page_size: int) -> ListResult:
    items: list[Json] = []
    token = ""
    version = ""
    while True:
        query: dict[str, str | int | bool] = {"limit": page_size}
        if token:
            query["continue"] = token
        if label_selector:
            query["labelSelector"] = label_selector
        if kind.field_selector:
            query["fieldSelector"] = kind.field_selector
        page = conn.request("GET", kind.path, query=query, what=f"list {kind.kind}")
        for item in page.get("items") or []:
            items.append({"apiVersion": kind.api_version, "kind": kind.kind, **item})
        metadata = page.get("metadata") or {}
        version = str(metadata.get("resourceVersion", version))
        token = str(metadata.get("continue") or "")
        if not token:
            return ListResult(kind, items, version)


@dataclass
class Readback:
    """One read of a cluster: the objects for a snapshot, and how to continue from it."""

    objects: list[Json]
    resource_versions: dict[str, str]
    missing: list[str]
    started_at: datetime
    finished_at: datetime
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def taken_at(self) -> datetime:
        """The snapshot's time: when the first list began (objects are at least this new)."""
        return self.started_at


def read_cluster(
    conn: Connection,
    kinds: tuple[Kind, ...] = SNAPSHOT_KINDS,
    *,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> Readback:
    """List every kind in ``kinds`` into one object list for ``ClusterSnapshot``."""
    started = clock()
    objects: list[Json] = []
    versions: dict[str, str] = {}
    missing: list[str] = []
    counts: dict[str, int] = {}
    for kind in kinds:
        result = list_objects(conn, kind)
        objects.extend(result.items)
        counts[kind.kind] = len(result.items)
        if result.missing:
            missing.append(kind.kind)
        else:
            versions[kind.kind] = result.resource_version
    return Readback(objects, versions, missing, started, clock(), counts)


def version_signature(objects: list[Json]) -> str:
    """What identifies this state of the objects: each one's kind, name and resourceVersion
    (a list's own resourceVersion is the whole store's revision, which every lease renewal
    moves, so it cannot tell whether these objects changed). Equal signatures: nothing changed.
    """
    keys = sorted(
        "{}/{}/{}@{}".format(
            obj.get("kind", ""),
            (obj.get("metadata") or {}).get("namespace", ""),
            (obj.get("metadata") or {}).get("name", ""),
            (obj.get("metadata") or {}).get("resourceVersion", ""),
        )
        for obj in objects
    )
    return hashlib.sha256("\n".join(keys).encode()).hexdigest()


@dataclass(frozen=True)
class WatchEvent:
    type: str  # ADDED, MODIFIED, DELETED or BOOKMARK
    object: Json
    resource_version: str


def watch(
    conn: Connection,
    kind: Kind,
    resource_version: str,
    *,
    timeout_seconds: int = 60,
) -> Iterator[WatchEvent]:
    """Changes to ``kind`` after ``resource_version`` (from a list), until the server ends the
    watch after ``timeout_seconds``. Raises :class:`ResourceVersionExpired` when the version
    is too old: then list again.
    """
    query: dict[str, str | int | bool] = {
        "watch": True,
        "resourceVersion": resource_version,
        "allowWatchBookmarks": True,
        "timeoutSeconds": timeout_seconds,
    }
    if kind.field_selector:
        query["fieldSelector"] = kind.field_selector
    stream = conn.stream(kind.path, query=query, read_timeout=timeout_seconds + 15)
    for event in stream:
        obj = event.get("object") or {}
        if event.get("type") == "ERROR":
            message = str(obj.get("message", "watch error"))
            if obj.get("code") == 410:
                raise ResourceVersionExpired(message, status=410)
            raise PermanentError(f"watch {kind.kind}: {message}", status=obj.get("code"))
        if event.get("type") != "BOOKMARK":
            obj = {"apiVersion": kind.api_version, "kind": kind.kind, **obj}
        version = str((obj.get("metadata") or {}).get("resourceVersion", ""))
        yield WatchEvent(str(event.get("type")), obj, version)
