"""What-if comparisons: one workload placed under two scheduler configurations, as a job.

The row is the job: a task claims it with a conditional UPDATE (queued → running), writes its
progress and heartbeat while it runs, and stores the report when done. A viewer reads the
row; nobody waits on the broker.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from policy.clusters.models import Cluster, ClusterSnapshot
from policy.core.choices import ConfigurationSource, WhatIfStatus, WorkloadSource

UNFINISHED = (WhatIfStatus.QUEUED, WhatIfStatus.RUNNING)


class WhatIfRun(models.Model):
    """A comparison: the workload, both configurations as they were, progress and report.

    Both configurations are stored as documents (``None``: kube-scheduler's defaults), so a
    run stays readable and repeatable whatever the stored policies become.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="what_ifs")
    snapshot = models.ForeignKey(
        ClusterSnapshot, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    snapshot_taken_at = models.DateTimeField(help_text="When the starting snapshot was taken.")
    workload_source = models.CharField(max_length=16, choices=WorkloadSource.choices)
    workload = models.TextField(blank=True, help_text="The manifests as given (YAML or JSON).")
    replay_from = models.DateTimeField(
        null=True, blank=True, help_text="History replays: the first binding's earliest time."
    )
    replay_until = models.DateTimeField(
        null=True, blank=True, help_text="History replays: bindings before this time."
    )
    pod_count = models.PositiveIntegerField(default=0, help_text="Pods after expansion.")
    baseline_source = models.CharField(max_length=16, choices=ConfigurationSource.choices)
    baseline_label = models.CharField(max_length=120)
    baseline = models.JSONField(null=True, blank=True, help_text="None: the defaults.")
    baseline_thresholds = models.BooleanField(
        default=False,
        help_text="Node annotations as a push of the stored node threshold policies would "
        "write them, instead of as the snapshot has them.",
    )
    candidate_source = models.CharField(max_length=16, choices=ConfigurationSource.choices)
    candidate_label = models.CharField(max_length=120)
    candidate = models.JSONField(null=True, blank=True, help_text="None: the defaults.")
    candidate_thresholds = models.BooleanField(
        default=False,
        help_text="Node annotations as a push of the stored node threshold policies would "
        "write them, instead of as the snapshot has them.",
    )
    status = models.CharField(
        max_length=16, choices=WhatIfStatus.choices, default=WhatIfStatus.QUEUED
    )
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    heartbeat = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=255, blank=True)
    error = models.TextField(blank=True)
    result = models.JSONField(null=True, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created = models.DateTimeField(auto_now_add=True, db_index=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]
        indexes = [models.Index(fields=["cluster", "-created"], name="whatif_cluster_created")]

    def __str__(self) -> str:
        return f"what-if #{self.pk} on {self.cluster_id} ({self.status})"

    @property
    def finished_ok(self) -> bool:
        return self.status == WhatIfStatus.SUCCEEDED

    @property
    def unfinished(self) -> bool:
        return self.status in UNFINISHED

    @property
    def percent(self) -> int:
        if not self.progress_total:
            return 100 if not self.unfinished else 0
        return min(100, self.progress_done * 100 // self.progress_total)

    @property
    def duration(self) -> float | None:
        if self.started is None or self.finished is None:
            return None
        return (self.finished - self.started).total_seconds()

    def labels(self) -> tuple[str, str]:
        return self.baseline_label, self.candidate_label

    def summary(self) -> dict[str, Any]:
        """Counts per side, for lists (the full report is in ``result``)."""
        runs = (self.result or {}).get("runs") or []
        return {
            "placed": [run.get("placed") for run in runs],
            "unschedulable": [run.get("unschedulable") for run in runs],
            "differences": (self.result or {}).get("differenceCount"),
        }
