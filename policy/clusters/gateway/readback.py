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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from policy.clusters.gateway.connection import Connection, Json
from policy.clusters.gateway.errors import NotFoundError, PermanentError, ResourceVersionExpired

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
    # Only these top-level fields of spec are kept (None: all): controllers are read for their
    # selectors, not their pod templates.
    spec_fields: tuple[str, ...] | None = None

    @property
    def group(self) -> str:
        """The API group ("" for the core group), from the list path."""
        parts = self.path.strip("/").split("/")
        return "" if parts[0] == "api" else parts[1]

    @property
    def resource(self) -> str:
        return self.path.rstrip("/").rsplit("/", 1)[1]


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
# What PodTopologySpread's default constraints (Services and controllers select the pod) and
# InterPodAffinity's namespace selectors (Namespace labels) read; best effort, like events.
NAMESPACES = Kind("Namespace", "v1", "/api/v1/namespaces", best_effort=True, spec_fields=())
SERVICES = Kind("Service", "v1", "/api/v1/services", best_effort=True, spec_fields=("selector",))
REPLICATION_CONTROLLERS = Kind(
    "ReplicationController",
    "v1",
    "/api/v1/replicationcontrollers",
    best_effort=True,
    spec_fields=("selector",),
)
REPLICA_SETS = Kind(
    "ReplicaSet",
    "apps/v1",
    "/apis/apps/v1/replicasets",
    best_effort=True,
    spec_fields=("selector",),
)
STATEFUL_SETS = Kind(
    "StatefulSet",
    "apps/v1",
    "/apis/apps/v1/statefulsets",
    best_effort=True,
    spec_fields=("selector",),
)
SNAPSHOT_KINDS = (
    NODES,
    PODS,
    NODE_METRICS,
    TOPOLOGIES,
    SCHEDULING_EVENTS,
    NAMESPACES,
    SERVICES,
    REPLICATION_CONTROLLERS,
    REPLICA_SETS,
    STATEFUL_SETS,
)


def slim(obj: Json, kind: Kind | None = None) -> Json:
    """``obj`` without ``metadata.managedFields``, which nothing here reads and which is a large
    part of every object (informers commonly drop it with a transform), and with only the spec
    fields ``kind`` keeps (a controller's selector, not its pod template); a shallow copy."""
    metadata = obj.get("metadata")
    if isinstance(metadata, dict) and "managedFields" in metadata:
        obj = {**obj, "metadata": {k: v for k, v in metadata.items() if k != "managedFields"}}
    if kind is not None and kind.spec_fields is not None:
        spec = obj.get("spec")
        kept = {k: v for k, v in (spec or {}).items() if k in kind.spec_fields}
        obj = {k: v for k, v in obj.items() if k not in ("spec", "status")}
        if kept:
            obj["spec"] = kept
    return obj


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
    signature: str = ""  # version_signature(objects), when the reader kept it up to date
    changes: int = 0  # watch events applied (informer reads)
    listed: list[str] = field(default_factory=list)  # kinds read by a full list

    @property
    def taken_at(self) -> datetime:
        """The snapshot's time: when the first list began (objects are at least this new)."""
        return self.started_at


SIGNATURE_MODULUS = 2**128


def object_digest(obj: Json) -> int:
    """One object's share of :func:`version_signature`: its kind, name and resourceVersion."""
    metadata = obj.get("metadata") or {}
    text = "{}/{}/{}@{}".format(
        obj.get("kind", ""),
        metadata.get("namespace", ""),
        metadata.get("name", ""),
        metadata.get("resourceVersion", ""),
    )
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "big")


def signature_of(digest_sum: int) -> str:
    return format(digest_sum % SIGNATURE_MODULUS, "032x")


def version_signature(objects: Iterable[Json]) -> str:
    """What identifies this state of the objects: each one's kind, name and resourceVersion
    (a list's own resourceVersion is the whole store's revision, which every lease renewal
    moves, so it cannot tell whether these objects changed). Equal signatures: nothing changed.

    A sum of per-object digests, so an informer updates it per event instead of per object.
    """
    return signature_of(sum(object_digest(obj) for obj in objects))


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
    idle_seconds: float | None = None,
) -> Iterator[WatchEvent]:
    """Changes to ``kind`` after ``resource_version`` (from a list), until the server ends the
    watch after ``timeout_seconds`` or, given ``idle_seconds``, no event came for that long.
    Raises :class:`ResourceVersionExpired` when the version is too old: then list again.
    """
    query: dict[str, str | int | bool] = {
        "watch": True,
        "resourceVersion": resource_version,
        "allowWatchBookmarks": True,
        "timeoutSeconds": timeout_seconds,
    }
    if kind.field_selector:
        query["fieldSelector"] = kind.field_selector
    stream = conn.stream(
        kind.path, query=query, read_timeout=timeout_seconds + 15, idle_timeout=idle_seconds
    )
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
