"""Service functions: every change to schedboard's data goes through here.

Views, viewsets, management commands and tasks call these; serializers and forms only
validate input (as Saleor's ``actions.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from policy import prepared, snapshot_chains
from policy.choices import ClusterKind
from policy.models import ApiToken, Cluster, ClusterSnapshot, PlacementDecision
from policy.snapshot_chains import SnapshotChanges
from scoring.plugins.loadaware.args import PLUGIN_NAME as LOADAWARE
from scoring.synthetic import generate_cluster

DEMO_CLUSTER = "demo"


class ServiceError(ValueError):
    """A request the data does not allow; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class QueuedTask:
    name: str
    id: str


def record_snapshot(
    cluster: Cluster,
    objects: Sequence[dict[str, Any]],
    taken_at: datetime,
    changes: SnapshotChanges | None = None,
) -> ClusterSnapshot:
    """Store ``objects`` as the cluster's snapshot at ``taken_at``, with their counts; given
    what changed since the newest snapshot, only that (``policy.snapshot_chains``)."""
    snapshot = snapshot_chains.store(cluster, objects, taken_at, changes)
    prepared.queue(cluster.pk)
    return snapshot


def load_demo_cluster(
    *, name: str = DEMO_CLUSTER, nodes: int = 60, seed: int = 7, now: datetime | None = None
) -> ClusterSnapshot:
    """Generate a synthetic cluster and store it as a new snapshot of demo cluster ``name``.

    Idempotent on the cluster (created once); each call adds a snapshot taken ``now``, so the
    NodeMetrics in the newest one are fresh.
    """
    now = now or timezone.now().replace(microsecond=0)
    objects = generate_cluster(nodes=nodes, seed=seed, now=now)
    with transaction.atomic():
        cluster, _ = Cluster.objects.get_or_create(name=name, defaults={"kind": ClusterKind.DEMO})
        return record_snapshot(cluster, objects, now)


def seed_demo_policies(cluster: Cluster) -> bool:
    """Give a cluster without a scheduler configuration the demo's, recorded in the history as
    a system change: ``default-scheduler`` spreading with Koordinator's LoadAwareScheduling
    (its default args), and ``batch-scheduler`` (the demo's batch pods) packing nodes
    (NodeResourcesFit MostAllocated) under the same LoadAware guard; and a node threshold
    policy giving the memory-optimized pool its own thresholds (not pushed yet, so the sync
    page has something to show). False when the cluster already has a configuration."""
    from policy.models import SchedulerConfiguration
    from policy.services.changes import ChangeContext
    from policy.services.policies import (
        LoadAwareArgsService,
        NodeThresholdPolicyService,
        ProfileService,
        SchedulerConfigurationService,
    )

    if SchedulerConfiguration.objects.filter(cluster=cluster).exists():
        return False
    ctx = ChangeContext.system()
    with transaction.atomic():
        configuration = SchedulerConfigurationService().create({"cluster": cluster}, ctx)
        load_aware = {"multiPoint": {"enabled": [{"name": LOADAWARE}]}}
        packing = [
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
        ]
        for position, (name, plugin_config) in enumerate(
            (("default-scheduler", []), ("batch-scheduler", packing))
        ):
            profile = ProfileService().create(
                {
                    "configuration": configuration,
                    "position": position,
                    "scheduler_name": name,
                    "plugins": load_aware,
                    "plugin_config": plugin_config,
                },
                ctx,
            )
            LoadAwareArgsService().create({"profile": profile}, ctx)
        NodeThresholdPolicyService().create(
            {
                "cluster": cluster,
                "name": "memory-pool",
                "description": "Memory-optimized nodes: more cpu headroom, less memory.",
                "node_selector": {"matchLabels": {"pool": "memory"}},
                "usage_thresholds": {"cpu": 80, "memory": 85},
            },
            ctx,
        )
    return True


def prune_snapshots(keep: int | None = None) -> int:
    """Delete all but the newest ``keep`` snapshots of every cluster; returns how many went."""
    keep = keep or settings.SNAPSHOT_RETENTION
    return sum(
        snapshot_chains.prune(cluster_id, keep)
        for cluster_id in Cluster.objects.values_list("id", flat=True)
    )


def prune_decisions(now: datetime | None = None) -> int:
    """Delete decisions older than ``DECISION_RETENTION_DAYS``, and beyond the newest
    ``DECISION_RETENTION_COUNT`` of each cluster; returns how many went. Explanations are
    large (every node's verdict), so history is bounded in time and per cluster."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.DECISION_RETENTION_DAYS)
    deleted = PlacementDecision.objects.filter(created__lt=cutoff).delete()[0]
    keep = settings.DECISION_RETENTION_COUNT
    for cluster_id in Cluster.objects.values_list("id", flat=True):
        newest = PlacementDecision.objects.filter(cluster_id=cluster_id).order_by("-created", "-id")
        beyond = newest.values_list("id", flat=True)[keep:]
        ids = list(beyond)
        if ids:
            deleted += PlacementDecision.objects.filter(id__in=ids).delete()[0]
    return deleted


def create_token(
    owner: User,
    *,
    name: str,
    write_enabled: bool = True,
    expires: datetime | None = None,
    creator: ApiToken | None = None,
) -> tuple[ApiToken, str]:
    """Create a token for ``owner``; returns it with its key, which is not stored anywhere.

    ``creator`` is the token authenticating the request, if any: a token cannot mint one
    with more rights than itself (write access, a later or no expiry).
    """
    if creator is not None:
        _check_within(creator, write_enabled, expires)
    token = ApiToken(owner=owner, name=name, write_enabled=write_enabled, expires=expires)
    key = ApiToken.generate_key()
    token.set_key(key)
    try:
        with transaction.atomic():
            token.save()
    except IntegrityError:  # a concurrent request took the name since it was validated
        raise ServiceError("name", f"You already have a token named {name!r}.") from None
    return token, key


def _check_within(creator: ApiToken, write_enabled: bool, expires: datetime | None) -> None:
    if write_enabled and not creator.write_enabled:
        raise ServiceError("write_enabled", "A read-only token cannot create a write token.")
    if creator.expires is None:
        return
    if expires is None or expires > creator.expires:
        raise ServiceError(
            "expires",
            f"This token expires at {creator.expires.isoformat()}; "
            "the new token must expire no later.",
        )


def revoke_token(token: ApiToken) -> None:
    """Revoke (delete) a token: requests using its key fail from now on."""
    token.delete()


def request_cluster_sync(cluster: Cluster) -> QueuedTask:
    """Queue an automatic push of ``cluster`` once the current transaction commits (a push
    already waiting in the queue is reused; see :mod:`policy.sync.jobs`)."""
    from policy.models import SyncJobTrigger
    from policy.services.sync import push
    from policy.tasks import push_cluster

    job = push(cluster, trigger=SyncJobTrigger.AUTOMATIC)
    return QueuedTask(name=push_cluster.name, id=str(job.pk))
