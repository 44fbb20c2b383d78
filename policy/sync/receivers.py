"""The sync's answers to what the domains below it announce (connected in ``policy.apps``)."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from policy.clusters.models import Cluster
from policy.core.choices import PushMode
from policy.policies.signals import policies_changed
from policy.sync.services import request_cluster_sync


@receiver(policies_changed)
def push_automatically(sender: Any, cluster: Cluster, **kwargs: Any) -> None:
    """Clusters in automatic push mode get every committed change pushed."""
    if cluster.push_mode == PushMode.AUTOMATIC:
        request_cluster_sync(cluster)
