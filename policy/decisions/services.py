"""What the decisions domain does for the tasks: after a refresh, the decisions it brings."""

from __future__ import annotations

from policy.clusters.models import Cluster
from policy.decisions.pending import evaluate_pending_pods


def after_refresh(cluster_id: int) -> dict[str, int] | None:
    """Record a decision for each pending pod whose decision changed; None when the cluster is
    gone. Bringing the engine state to the newest snapshot records the bindings made since
    the one it held (``policy.decisions.observed``)."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return None
    return evaluate_pending_pods(cluster)
