"""Sync jobs (pushes, refreshes, connections) and each cluster's sync state."""

from policy.sync.models.jobs import (
    UNFINISHED,
    ClusterSyncState,
    SyncJob,
    SyncJobKind,
    SyncJobStatus,
    SyncJobTrigger,
)

__all__ = [
    "UNFINISHED",
    "ClusterSyncState",
    "SyncJob",
    "SyncJobKind",
    "SyncJobStatus",
    "SyncJobTrigger",
]
