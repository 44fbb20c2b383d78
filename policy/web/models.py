"""What the web needs of a stored snapshot, prepared by the worker when the snapshot is stored
(``policy.web.prepared``), so a fresh web process shows a 5,000-node cluster without
rebuilding it."""

from __future__ import annotations

from django.db import models

from policy.clusters.models import ClusterSnapshot


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
