"""Per-snapshot aggregates of the dashboard's load, for trends over the snapshot history
(``policy.trends``): a few numbers per snapshot and each node's load, compressed, so a trend
over the last snapshots never rebuilds or materializes any of them."""

from __future__ import annotations

from django.db import models

from policy.models.clusters import ClusterSnapshot


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
