"""Clusters schedboard knows, point-in-time snapshots of their objects, and what the pages
need of each snapshot, prepared when it is stored."""

from policy.clusters.models.clusters import Cluster, ClusterSnapshot, SnapshotQuerySet
from policy.clusters.models.prepared import PreparedView, SnapshotTrend

__all__ = ["Cluster", "ClusterSnapshot", "PreparedView", "SnapshotQuerySet", "SnapshotTrend"]
