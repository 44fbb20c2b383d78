"""Where a push writes: a real API server (:mod:`policy.clusters.gateway`), or a demo cluster.

Both plan first (the dry-run, object by object), then apply exactly that plan. A real cluster
re-plans an object whose write met a conflict (409) from a fresh read; a demo cluster has no
API server, so its "objects" are the newest stored snapshot: a push stores a new snapshot
whose Node annotations carry the thresholds, so the engine sees them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone

from policy.clusters.gateway import apply as gw
from policy.clusters.gateway.changes import Change, OnWrite
from policy.clusters.gateway.connection import Connection, ConnectionSpec, Timeouts, connect
from policy.clusters.gateway.discovery import scheduler_image
from policy.clusters.gateway.drift import (
    Drift,
    annotation_drift,
    colocation_drift,
    configmap_key_drift,
)
from policy.clusters.gateway.errors import ApplyError, GatewayError, PermanentError
from policy.clusters.gateway.informer import ClusterInformer, informer_for
from policy.clusters.gateway.retry import DEFAULT_POLICY, RetryPolicy
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.clusters.object_changes import SnapshotChanges
from policy.core.choices import ClusterKind
from policy.policies.models import SchedulerConfiguration
from policy.sync.models import ClusterSyncState
from policy.sync.planners import Desired, Owned
from scoring import ANNOTATION_USAGE_THRESHOLDS, RESOURCE_THRESHOLD_KEY

# Tests make these quicker; a worker uses the gateway's defaults.
RETRY_POLICY: RetryPolicy = DEFAULT_POLICY
TIMEOUTS = Timeouts()


@dataclass
class PushPlan:
    """The three parts of a push; ``changes`` is every Change, object by object."""

    config: gw.Plan = field(default_factory=gw.Plan)
    nodes: gw.Plan = field(default_factory=gw.Plan)
    slo: gw.Plan = field(default_factory=gw.Plan)
    descheduler: gw.Plan = field(default_factory=gw.Plan)

    @property
    def changes(self) -> list[Change]:
        return [*self.config, *self.nodes, *self.slo, *self.descheduler]

    @property
    def notes(self) -> list[str]:
        return [*self.config.notes, *self.nodes.notes, *self.slo.notes, *self.descheduler.notes]

    def owned_after(self, before: Owned, collect_fields: frozenset[str] | None = None) -> Owned:
        """Ownership once applied; ``collect_fields``: the cluster-wide collect fields it
        writes (None: it leaves colocation-config alone, so ownership there is unchanged)."""
        return Owned(
            self.nodes.owned if self.nodes.owned is not None else before.nodes,
            self.slo.owned if self.slo.owned is not None else before.node_configs,
            before.collect_fields if collect_fields is None else collect_fields,
        )

    def claim(self, before: Owned, desired: Desired) -> Owned:
        """Everything this plan may own once (partly) applied: recorded before writing."""
        after = self.owned_after(before, desired.collect_fields)
        return Owned(
            before.nodes | after.nodes,
            before.node_configs | after.node_configs,
            before.collect_fields | after.collect_fields,
        )


@dataclass
class PushResult:
    applied: list[Change]
    notes: list[str]
    owned: Owned


class PushFailed(Exception):
    """A push stopped part-way: ``applied`` were written (each object whole)."""

    def __init__(self, cause: GatewayError, applied: list[Change]) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.applied = applied


@dataclass
class RefreshResult:
    drift: list[Drift]
    snapshot: ClusterSnapshot | None = None
    counts: dict[str, int] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    signature: str = ""  # the objects' version_signature (real clusters only)
    listed: list[str] = field(default_factory=list)  # kinds read by a full list, not a watch
    changes: int = 0  # watch events applied since the previous read
    since_stored: SnapshotChanges | None = None  # what changed since the newest snapshot
    # The scheduler ConfigMap's configuration when it was read (to detect the scheduler target,
    # and to adopt it when schedboard stores none).
    live_scheduler_config: str | None = None
    scheduler_image: str | None = None  # the image of the Deployment mounting it
    # koord-descheduler's and koordlet's ConfigMap keys as read (None: not there), and why a
    # read was refused (the refresh goes on without them).
    live_descheduler_config: str | None = None
    live_resource_thresholds: str | None = None
    load_stack_notes: list[str] = field(default_factory=list)


def target_for(cluster: Cluster) -> KubeTarget | DemoTarget:
    if cluster.kind == ClusterKind.DEMO:
        return DemoTarget(cluster)
    return KubeTarget(cluster)


class KubeTarget:
    """A cluster reached through a kubeconfig or in-cluster credentials."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._conn: Connection | None = None
        self._informer: ClusterInformer | None = None

    @property
    def conn(self) -> Connection:
        if self._conn is None:
            spec = ConnectionSpec.from_cluster(
                self.cluster, credential_plugins=settings.KUBECONFIG_CREDENTIAL_PLUGINS
            )
            self._conn = connect(spec, retry_policy=RETRY_POLICY, timeouts=TIMEOUTS)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    @property
    def slo_target(self) -> gw.SloTarget:
        c = self.cluster
        return gw.SloTarget(c.slo_config_namespace, c.slo_config_name, gw.COLOCATION_KEY)

    def plan(self, desired: Desired, owned: Owned) -> PushPlan:
        c = self.cluster
        plan = PushPlan()
        if desired.scheduler_config is not None:
            plan.config = gw.plan_configmap_key(
                self.conn,
                c.scheduler_config_namespace,
                c.scheduler_config_name,
                c.scheduler_config_key,
                desired.scheduler_config,
                same=gw.same_document,
            )
        plan.nodes = gw.plan_node_annotations(self.conn, desired.annotations, owned.nodes)
        if desired.descheduler_config is not None:
            plan.descheduler = gw.plan_configmap_key(
                self.conn,
                c.descheduler_config_namespace,
                c.descheduler_config_name,
                c.descheduler_config_key,
                desired.descheduler_config,
                same=gw.same_document,
            )
        if desired.manage_slo:
            plan.slo = gw.plan_slo_colocation(
                self.conn,
                desired.collect_cluster,
                desired.node_configs,
                owned.node_configs,
                target=self.slo_target,
            )
        return plan

    def apply(
        self, desired: Desired, owned: Owned, plan: PushPlan, on_write: OnWrite | None = None
    ) -> PushResult:
        """Write the plan; ``on_write`` hears of each write as it lands."""
        c = self.cluster
        applied: list[Change] = []
        notes: list[str] = list(plan.config.notes)
        nodes_owned, configs_owned = owned.nodes, owned.node_configs
        try:
            if desired.scheduler_config is not None:
                result = gw.apply_configmap_key(
                    self.conn,
                    c.scheduler_config_namespace,
                    c.scheduler_config_name,
                    c.scheduler_config_key,
                    desired.scheduler_config,
                    plan=plan.config,
                    on_write=on_write,
                    same=gw.same_document,
                )
                applied += result.applied
            try:
                nodes = gw.apply_node_annotations(
                    self.conn, desired.annotations, owned.nodes, plan=plan.nodes, on_write=on_write
                )
            except ApplyError as exc:
                applied += exc.applied
                raise PushFailed(exc.cause, applied) from None
            applied += nodes.applied
            notes += nodes.notes
            nodes_owned = nodes.owned if nodes.owned is not None else nodes_owned
            if desired.manage_slo:
                slo = gw.apply_slo_colocation(
                    self.conn,
                    desired.collect_cluster,
                    desired.node_configs,
                    owned.node_configs,
                    target=self.slo_target,
                    plan=plan.slo,
                    on_write=on_write,
                )
                applied += slo.applied
                notes += slo.notes
                configs_owned = slo.owned if slo.owned is not None else configs_owned
            if desired.descheduler_config is not None:
                written = gw.apply_configmap_key(
                    self.conn,
                    c.descheduler_config_namespace,
                    c.descheduler_config_name,
                    c.descheduler_config_key,
                    desired.descheduler_config,
                    plan=plan.descheduler,
                    on_write=on_write,
                    same=gw.same_document,
                )
                applied += written.applied
                notes += plan.descheduler.notes
        except GatewayError as exc:
            raise PushFailed(exc, applied) from None
        collect = desired.collect_fields if desired.manage_slo else owned.collect_fields
        return PushResult(
            applied, notes, Owned(frozenset(nodes_owned), frozenset(configs_owned), collect)
        )

    def refresh(
        self, state: ClusterSyncState
    ) -> tuple[list[dict[str, Any]], datetime, RefreshResult]:
        """Read the cluster back; drift is checked against ``state`` (what was last written).

        Returns (objects, taken_at, result without its snapshot): the caller stores them.
        """
        self._informer = informer_for(self.cluster.pk, repr(self.conn))
        readback = self._informer.read(self.conn)
        nodes = [obj for obj in readback.objects if obj.get("kind") == "Node"]
        drift = annotation_drift(nodes, dict(state.annotations or {}))
        if drift:  # drift is reported from etcd, not from a watch cache a moment behind a push
            readback = self._informer.read(self.conn, relist=("Node",))
            nodes = [obj for obj in readback.objects if obj.get("kind") == "Node"]
            drift = annotation_drift(nodes, dict(state.annotations or {}))
        c = self.cluster
        live = image = None
        stored = SchedulerConfiguration.objects.filter(cluster=c).exists()
        if state.scheduler_config is not None or not stored:
            namespace, name = c.scheduler_config_namespace, c.scheduler_config_name
            configmap = gw.read_configmap(self.conn, namespace, name)
            live = ((configmap or {}).get("data") or {}).get(c.scheduler_config_key)
            image = scheduler_image(self.conn, namespace, name) if configmap else None
            if state.scheduler_config is not None:
                changed = configmap_key_drift(
                    configmap, namespace, name, c.scheduler_config_key, state.scheduler_config
                )
                drift[:0] = [changed] if changed else []
        if state.colocation_written:
            target = self.slo_target
            configmap = gw.read_configmap(self.conn, target.namespace, target.name)
            drift += colocation_drift(
                configmap, target.namespace, target.name, target.key, state.colocation_written
            )
        partial = RefreshResult(
            drift,
            counts=dict(readback.counts),
            missing=readback.missing,
            signature=readback.signature,
            listed=readback.listed,
            changes=readback.changes,
            since_stored=self._changes_since_stored(),
            live_scheduler_config=live,
            scheduler_image=image,
        )
        self._read_load_stack(partial, state.descheduler_config)
        return readback.objects, readback.taken_at, partial

    def _read_load_stack(self, result: RefreshResult, descheduler_written: str | None) -> None:
        """koord-descheduler's configuration and koordlet's thresholds, where the cluster
        says they are; a refused read is noted, not fatal. The descheduler's document has
        drifted when it is no longer what schedboard last wrote there (``descheduler_written``,
        None: schedboard never wrote it)."""
        c = self.cluster
        places = (
            ("live_descheduler_config", c.descheduler_config_namespace,
             c.descheduler_config_name, c.descheduler_config_key),
            ("live_resource_thresholds", c.slo_config_namespace, c.slo_config_name,
             RESOURCE_THRESHOLD_KEY),
        )  # fmt: skip
        for attribute, namespace, name, key in places:
            try:
                configmap = gw.read_configmap(self.conn, namespace, name)
            except PermanentError as exc:
                result.load_stack_notes.append(f"{namespace}/{name} not read: {exc}")
                continue
            setattr(result, attribute, ((configmap or {}).get("data") or {}).get(key))
            if attribute == "live_descheduler_config" and descheduler_written is not None:
                changed = configmap_key_drift(configmap, namespace, name, key, descheduler_written)
                result.drift += [changed] if changed else []

    def _changes_since_stored(self) -> SnapshotChanges | None:
        changed = self._informer.changed_since_stored() if self._informer else None
        if changed is None:
            return None
        since, objects = changed
        put = [obj for obj in objects.values() if obj is not None]
        return SnapshotChanges(since, put, [ref for ref, obj in objects.items() if obj is None])

    def snapshot_stored(self, snapshot_id: int) -> None:
        """The objects of the last refresh are snapshot ``snapshot_id`` (stored, or found
        equal to it): later refreshes may store what changed since."""
        if self._informer is not None:
            self._informer.mark_stored(snapshot_id)


class DemoTarget:
    """A demo cluster: the newest snapshot's Node objects are the cluster's nodes.

    The scheduler ConfigMap is recorded in the sync state only (nothing reads it), and the
    collect policy has no slo-controller to go to: noted, not written.
    """

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._stored: ClusterSnapshot | None = None

    def close(self) -> None:
        pass

    def snapshot_stored(self, snapshot_id: int) -> None:
        pass  # every demo snapshot is stored whole

    def _snapshot(self) -> ClusterSnapshot:
        if self._stored is None:
            from policy.policies.rendering import latest_snapshot

            summary = latest_snapshot(self.cluster)
            self._stored = ClusterSnapshot.snapshots.get(pk=summary.pk)
        return self._stored

    def plan(self, desired: Desired, owned: Owned) -> PushPlan:
        c = self.cluster
        plan = PushPlan()
        state = ClusterSyncState.objects.filter(cluster=c).first()
        current = state.scheduler_config if state else None
        if desired.scheduler_config is not None and desired.scheduler_config != current:
            plan.config.changes.append(
                Change(
                    "ConfigMap",
                    c.scheduler_config_namespace,
                    c.scheduler_config_name,
                    f"data[{c.scheduler_config_key}]",
                    current,
                    desired.scheduler_config,
                )
            )
        # The gateway's own (pure) planner, so ownership rules are the same as on a cluster.
        plan.nodes = gw._plan_nodes(
            snapshot_nodes(self._snapshot().objects),
            desired.annotations,
            owned.nodes,
            ANNOTATION_USAGE_THRESHOLDS,
        )
        if desired.manage_slo:
            plan.slo.notes.append(
                "demo cluster: no slo-controller; the collect policy is not written"
            )
        return plan

    def apply(
        self, desired: Desired, owned: Owned, plan: PushPlan, on_write: OnWrite | None = None
    ) -> PushResult:
        after = plan.owned_after(owned)
        if plan.nodes:
            objects = with_node_changes(self._snapshot().objects, plan.nodes.changes)
            store_derived_snapshot(self._snapshot(), objects)
        if on_write is not None:
            for change in plan.changes:
                on_write(change)
        return PushResult(list(plan.changes), plan.notes, after)

    def refresh(
        self, state: ClusterSyncState
    ) -> tuple[list[dict[str, Any]], datetime, RefreshResult]:
        from policy.sync.demo import drifted_objects

        stored = self._snapshot()
        now = timezone.now().replace(microsecond=0)
        objects = drifted_objects(stored.objects, stored.taken_at, now)
        nodes = [obj for obj in objects if obj.get("kind") == "Node"]
        drift = annotation_drift(nodes, dict(state.annotations or {}))
        partial = RefreshResult(drift)
        return objects, now, partial


def snapshot_nodes(objects: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A snapshot's Node objects by name, as the gateway's node planner reads them."""
    nodes = {}
    for obj in objects:
        if obj.get("kind") == "Node":
            # Synthetic nodes have no resourceVersion; the plan's Changes want one.
            metadata = {"resourceVersion": "0", **obj["metadata"]}
            nodes[metadata["name"]] = {**obj, "metadata": metadata}
    return nodes


def with_node_changes(
    objects: Sequence[dict[str, Any]], changes: Sequence[Change]
) -> list[dict[str, Any]]:
    """A copy of ``objects`` with the planned usage-threshold annotation changes made."""
    by_node = {change.name: change for change in changes}
    result = copy.deepcopy(list(objects))
    for obj in result:
        change = by_node.get(obj["metadata"]["name"]) if obj.get("kind") == "Node" else None
        if change is None:
            continue
        annotations = dict(obj["metadata"].get("annotations") or {})
        if change.after is None:
            annotations.pop(ANNOTATION_USAGE_THRESHOLDS, None)
        else:
            annotations[ANNOTATION_USAGE_THRESHOLDS] = change.after
        obj["metadata"]["annotations"] = annotations
    return result


def as_pushed(
    objects: Sequence[dict[str, Any]], desired: Mapping[str, str | None], owned: AbstractSet[str]
) -> tuple[list[dict[str, Any]], int]:
    """``objects`` as a push of the ``desired`` node annotations would leave them (schedboard's
    ownership rules: it removes only what it wrote), and how many nodes it would change."""
    plan = gw._plan_nodes(snapshot_nodes(objects), desired, owned, ANNOTATION_USAGE_THRESHOLDS)
    return with_node_changes(objects, plan.changes), len(plan.changes)


def store_derived_snapshot(
    source: ClusterSnapshot, objects: list[dict[str, Any]]
) -> ClusterSnapshot:
    """A new snapshot with ``objects`` taken at the same time as ``source`` (its NodeMetric
    ages stay what they were); being newer by id, it is the cluster's latest."""
    from policy.clusters.services import record_snapshot

    return record_snapshot(source.cluster, objects, source.taken_at)


def as_dicts(changes: list[Change]) -> list[dict[str, Any]]:
    return [change.as_dict() for change in changes]


__all__ = [
    "DemoTarget",
    "KubeTarget",
    "PushFailed",
    "PushPlan",
    "PushResult",
    "RefreshResult",
    "as_dicts",
    "target_for",
]
