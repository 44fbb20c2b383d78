"""Sync jobs (NetBox's ``Job``): every push, refresh and dry-run of a cluster, as a row.

The row, not the broker, is the source of truth: a task only carries a job id, claims the job
with a conditional UPDATE, and a beat task re-queues jobs whose message was lost (Redis
restarted) or whose worker died (lease expired). :class:`ClusterSyncState` holds what
schedboard last wrote to a cluster (for drift detection and annotation ownership) and the
per-cluster push lease that keeps two workers from pushing the same cluster at once.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from policy.clusters.models import Cluster
from policy.core.choices import SyncJobKind, SyncJobStatus, SyncJobTrigger

__all__ = ["ClusterSyncState", "SyncJob", "SyncJobKind", "SyncJobStatus", "SyncJobTrigger"]

UNFINISHED = (SyncJobStatus.QUEUED, SyncJobStatus.RUNNING)


class SyncJob(models.Model):
    """One push, refresh or dry-run of a cluster: status, timings, error, changes and log.

    ``changes`` lists the Change objects (``Change.as_dict()``) written, or for a dry-run the
    ones that would be. ``claimed_owned`` is the write-ahead record of the nodes and
    nodeConfigs entries a push is about to own: an interrupted push leaves the cluster state
    alone, and its retry (or the next push) still knows which annotations it may have written.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="sync_jobs")
    kind = models.CharField(max_length=16, choices=SyncJobKind.choices)
    status = models.CharField(
        max_length=16, choices=SyncJobStatus.choices, default=SyncJobStatus.QUEUED
    )
    trigger = models.CharField(
        max_length=16, choices=SyncJobTrigger.choices, default=SyncJobTrigger.OPERATOR
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created = models.DateTimeField(auto_now_add=True, db_index=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    worker = models.CharField(max_length=255, blank=True, help_text="Who holds the job.")
    lease_expires = models.DateTimeField(
        null=True, blank=True, help_text="A running job whose lease expired was interrupted."
    )
    error = models.TextField(blank=True)
    changes = models.JSONField(default=list, blank=True)
    notes = models.JSONField(default=list, blank=True)
    claimed_owned = models.JSONField(default=dict, blank=True)
    confirmed_changes = models.JSONField(
        null=True,
        blank=True,
        help_text="A push an operator confirmed: the changes shown (identity fields); the push "
        "writes nothing if it would make any other. Null: not limited.",
    )
    snapshot = models.ForeignKey(
        "policy.ClusterSnapshot",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The snapshot a refresh stored.",
    )
    log = models.TextField(blank=True)

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [
            models.Index(fields=["cluster", "-created"], name="syncjob_cluster_created"),
            models.Index(fields=["status", "kind"], name="syncjob_status_kind"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.cluster_id} #{self.pk} ({self.status})"

    @property
    def duration(self) -> float | None:
        if self.started is None or self.finished is None:
            return None
        return (self.finished - self.started).total_seconds()


class ClusterSyncState(models.Model):
    """What schedboard last wrote to a cluster, and who is pushing it right now.

    Updated only when a push succeeds (in the transaction that finishes its job), so a failed
    or interrupted push leaves it as it was.
    """

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, related_name="sync_state")
    # The per-cluster lease (claimed with a conditional UPDATE).
    locked_by = models.ForeignKey(
        SyncJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    lock_expires = models.DateTimeField(null=True, blank=True)
    # Last written state.
    last_push = models.ForeignKey(
        SyncJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    last_pushed_at = models.DateTimeField(null=True, blank=True)
    scheduler_config = models.TextField(
        null=True, blank=True, help_text="The scheduler ConfigMap key as last written."
    )
    descheduler_config = models.TextField(
        null=True, blank=True, help_text="koord-descheduler's ConfigMap key as last written."
    )
    annotations = models.JSONField(
        default=dict, blank=True, help_text="Node name -> usage-thresholds value last written."
    )
    owned_nodes = models.JSONField(default=list, blank=True)
    owned_node_configs = models.JSONField(default=list, blank=True)
    # The cluster-wide colocation-config collect fields schedboard wrote and may remove again;
    # the others are their owners' and are never touched.
    owned_collect_fields = models.JSONField(default=list, blank=True)
    # colocation-config's collect-policy fields as the last push left them (field -> value),
    # so a refresh can tell when someone changed one.
    colocation_written = models.JSONField(default=dict, blank=True)
    # The objects' version signature at the last refresh (gateway.readback.version_signature):
    # a refresh that finds the same stores no new snapshot.
    objects_signature = models.CharField(max_length=64, blank=True, default="")
    # The thresholds time windows' state at the last push (ids of the active policies).
    active_windows = models.JSONField(null=True, blank=True)
    # Drift found by the last refresh.
    drift = models.JSONField(default=list, blank=True)
    drift_checked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"sync state of {self.cluster_id}"

    def last_written(self) -> dict[str, Any]:
        return {"scheduler_config": self.scheduler_config, "annotations": dict(self.annotations)}
