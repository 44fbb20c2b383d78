"""The other two places a Koordinator cluster acts on node load, as read from the cluster.

koord-descheduler's ``DeschedulerConfiguration`` (LowNodeLoad evicts from nodes above its high
thresholds) and koordlet's ``resource-threshold-config`` (BE pods evicted above
``memoryEvictThresholdPercent``). Each row keeps its ConfigMap key's text exactly as written;
the engine (``scoring.descheduler``) reads it, and nothing here writes a default into it.
"""

from __future__ import annotations

from django.db import models

from policy.clusters.models import Cluster
from policy.core.models import VersionedModel


class DeschedulerConfiguration(VersionedModel):
    """koord-descheduler's configuration, adopted from its ConfigMap on refresh."""

    SNAPSHOT_FIELDS = ("cluster", "source", "configmap", "edited")

    cluster = models.OneToOneField(
        Cluster, on_delete=models.CASCADE, related_name="descheduler_configuration"
    )
    edited = models.BooleanField(
        default=False,
        help_text="Changed in schedboard since it was read: a refresh leaves it, a push "
        "writes it to the ConfigMap.",
    )
    source = models.TextField(help_text="The ConfigMap key's text, exactly as written.")
    configmap = models.CharField(max_length=600, help_text="namespace/name:key it was read from.")
    read_at = models.DateTimeField(help_text="When a refresh last found this text there.")

    class Meta:
        ordering = ["cluster__name"]

    def __str__(self) -> str:
        return f"{self.cluster} descheduler configuration"


class KoordletThresholdConfig(VersionedModel):
    """slo-controller-config's ``resource-threshold-config``, adopted on refresh."""

    SNAPSHOT_FIELDS = ("cluster", "source", "configmap")

    cluster = models.OneToOneField(
        Cluster, on_delete=models.CASCADE, related_name="koordlet_threshold_config"
    )
    source = models.TextField(help_text="The ConfigMap key's JSON, exactly as written.")
    configmap = models.CharField(max_length=600, help_text="namespace/name:key it was read from.")
    read_at = models.DateTimeField(help_text="When a refresh last found this text there.")

    class Meta:
        ordering = ["cluster__name"]

    def __str__(self) -> str:
        return f"{self.cluster} koordlet thresholds"
