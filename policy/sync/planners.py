"""What a push should write: the desired state of a cluster, rendered from its policies.

The values come from :mod:`policy.policies.rendering` (the same renders the API previews), so
what an editor sees is byte for byte what is written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Q

from policy.clusters.gateway.desired import collect_policy
from policy.clusters.models import Cluster
from policy.policies import descheduler, rendering
from policy.policies.models import NodeMetricCollectPolicy, SchedulerConfiguration
from policy.sync.models import ClusterSyncState, SyncJob, SyncJobKind, SyncJobStatus


@dataclass
class Desired:
    """The state a push writes. ``scheduler_config`` None: no configuration is stored, so the
    ConfigMap is left alone; ``manage_slo`` False: no collect policy, and nothing schedboard
    wrote there before, so slo-controller-config is not touched."""

    scheduler_config: str | None
    annotations: dict[str, str | None]
    collect_cluster: dict[str, int | None] = field(default_factory=dict)
    node_configs: list[dict[str, Any]] = field(default_factory=list)
    manage_slo: bool = False
    collect_fields: frozenset[str] = frozenset()  # cluster-wide fields the policy writes
    active_windows: list[int] = field(default_factory=list)
    # koord-descheduler's document when it was edited here (None: its ConfigMap is left alone)
    descheduler_config: str | None = None


@dataclass(frozen=True)
class Owned:
    """What schedboard may have written before: node annotations, nodeConfigs entries and
    cluster-wide collect fields of colocation-config."""

    nodes: frozenset[str]
    node_configs: frozenset[str]
    collect_fields: frozenset[str] = frozenset()

    def as_dict(self) -> dict[str, list[str]]:
        return {
            "nodes": sorted(self.nodes),
            "node_configs": sorted(self.node_configs),
            "collect_fields": sorted(self.collect_fields),
        }


def owned(state: ClusterSyncState) -> Owned:
    """The ownership recorded by the last successful push, plus what any push since then
    claimed before writing (it may have written part of it before failing or being killed)."""
    nodes = set(state.owned_nodes or [])
    configs = set(state.owned_node_configs or [])
    collect = set(state.owned_collect_fields or [])
    claims = SyncJob.objects.filter(cluster_id=state.cluster_id, kind=SyncJobKind.PUSH).exclude(
        status=SyncJobStatus.SUCCEEDED
    )
    if state.last_push_id is not None:
        claims = claims.filter(id__gt=state.last_push_id)
    for claim in claims.exclude(Q(claimed_owned={}) | Q(claimed_owned__isnull=True)).values_list(
        "claimed_owned", flat=True
    ):
        nodes.update(claim.get("nodes", []))
        configs.update(claim.get("node_configs", []))
        collect.update(claim.get("collect_fields", []))
    return Owned(frozenset(nodes), frozenset(configs), frozenset(collect))


def active_windows(cluster: Cluster, at: datetime | None = None) -> list[int]:
    """Ids of the enabled time-windowed threshold policies active at ``at`` (now)."""
    local = rendering.local_time(cluster, at).time().replace(tzinfo=None)
    return sorted(
        policy.pk
        for policy in cluster.threshold_policies.filter(enabled=True, active_from__isnull=False)
        if policy.is_active_at(local)
    )


def desired_state(cluster: Cluster, state: ClusterSyncState, at: datetime | None = None) -> Desired:
    """Render every policy of ``cluster``. Raises ``rendering.NoSnapshot`` when there is no
    snapshot to match the threshold policies' selectors against."""
    configuration = SchedulerConfiguration.objects.filter(cluster=cluster).first()
    scheduler_config = (
        rendering.render_scheduler_configuration(configuration) if configuration else None
    )
    _, _, rows = rendering.render_node_thresholds(cluster, at)
    annotations = {row.node: row.value for row in rows}

    writes = _cluster_collect_fields(cluster)
    collect_cluster = _collect_changes(writes, owned(state).collect_fields)
    content = rendering.colocation_config(cluster)
    node_configs = [
        {key: value for key, value in entry.items() if value is not None}
        for entry in content.get("nodeConfigs", [])
    ]
    manage_slo = bool(collect_cluster or node_configs or state.owned_node_configs)
    return Desired(
        scheduler_config=scheduler_config,
        annotations=annotations,
        collect_cluster=collect_cluster,
        node_configs=node_configs,
        manage_slo=manage_slo,
        collect_fields=frozenset(writes),
        active_windows=active_windows(cluster, at),
        descheduler_config=descheduler.text_to_push(cluster),
    )


def _cluster_collect_fields(cluster: Cluster) -> dict[str, int]:
    """The cluster-wide collect fields the default collect policy sets (none: no policy)."""
    default = NodeMetricCollectPolicy.objects.filter(cluster=cluster, is_default=True).first()
    if default is None:
        return {}
    fields = collect_policy(default.report_interval_seconds, default.aggregate_duration_seconds)
    return {key: value for key, value in fields.items() if value is not None}


def _collect_changes(writes: dict[str, int], owned: frozenset[str]) -> dict[str, int | None]:
    """What to set in colocation-config: the policy's fields, and None (remove) for a field
    schedboard wrote before that the policy no longer sets. A field it never wrote is its
    owner's (Koordinator's defaults, another tool, a person) and is left exactly as found."""
    return {**dict.fromkeys(sorted(owned - writes.keys())), **writes}
