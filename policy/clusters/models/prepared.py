"""What the pages need of a stored snapshot, prepared by the worker when the snapshot is stored
(``policy.web.prepared``, ``policy.web.trends``), so a fresh web process shows a 5,000-node
cluster without rebuilding it, and the trends read no snapshot."""

from __future__ import annotations

from django.db import models

from policy.clusters.models.clusters import ClusterSnapshot


class PreparedView(models.Model):
    """One prepared value of a snapshot: ``kind`` (e.g. the dashboard's load) for the
    configuration ``key`` (digest and profile of the LoadAware args in force), compressed."""

    snapshot = models.ForeignKey(ClusterSnapshot, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=32)
    key = models.CharField(max_length=200)
    data = models.BinaryField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "kind", "key"], name="prepared_view_once")
        ]

    def __str__(self) -> str:
        return f"{self.kind} of snapshot {self.snapshot_id} ({self.key})"


class SnapshotTrend(models.Model):
    """What the dashboard showed of one snapshot, for the LoadAware configuration ``key``
    (digest and profile, as ``PreparedView``): loads are % of allocatable, measured plus the
    estimates of recently placed pods, as LoadAwareScheduling judges them."""

    snapshot = models.ForeignKey(ClusterSnapshot, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    nodes = models.PositiveIntegerField(default=0)
    measured = models.PositiveIntegerField(default=0, help_text="Nodes with a usable load.")
    cpu_mean = models.FloatField(null=True)
    cpu_p90 = models.FloatField(null=True)
    cpu_max = models.FloatField(null=True)
    memory_mean = models.FloatField(null=True)
    memory_p90 = models.FloatField(null=True)
    memory_max = models.FloatField(null=True)
    over = models.PositiveIntegerField(default=0, help_text="Nodes above their threshold.")
    filtered = models.PositiveIntegerField(default=0, help_text="Nodes filtered now.")
    pods_pending = models.PositiveIntegerField(default=0)
    per_node = models.BinaryField(help_text="Each node's cpu and memory load and thresholds.")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "key"], name="snapshot_trend_once")
        ]

    def __str__(self) -> str:
        return f"trend of snapshot {self.snapshot_id} ({self.key})"
