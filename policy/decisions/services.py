"""What the decisions domain does for the tasks: after a refresh, the decisions it brings."""

from __future__ import annotations

from policy.clusters.models import Cluster
from policy.decisions.observed import record_bindings
from policy.decisions.pending import evaluate_pending_pods


def after_refresh(cluster_id: int) -> dict[str, int] | None:
    """Record a decision for each pending pod whose decision changed, and for each pod the
    cluster's scheduler bound since the previous snapshot; None when the cluster is gone."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return None
    counts = evaluate_pending_pods(cluster)
    counts.update({f"bindings_{k}": v for k, v in record_bindings(cluster).items()})
    return counts
