"""schedboard's models, one module per concern (as NetBox does)."""

from policy.models.changelog import AuthorizationFailure, PolicyChange
from policy.models.clusters import Cluster, ClusterSnapshot
from policy.models.decisions import PlacementDecision
from policy.models.jobs import ClusterSyncState, SyncJob, SyncJobKind, SyncJobStatus, SyncJobTrigger
from policy.models.loadaware import LoadAwareSchedulingArgs
from policy.models.nodemetrics import NodeMetricCollectPolicy
from policy.models.prepared import PreparedView
from policy.models.scheduler import SchedulerConfiguration, SchedulerProfile
from policy.models.thresholds import NodeThresholdPolicy
from policy.models.tokens import ApiToken
from policy.models.trends import SnapshotTrend
from policy.models.whatif import WhatIfRun

__all__ = [
    "ApiToken",
    "AuthorizationFailure",
    "Cluster",
    "ClusterSnapshot",
    "ClusterSyncState",
    "LoadAwareSchedulingArgs",
    "NodeMetricCollectPolicy",
    "NodeThresholdPolicy",
    "PlacementDecision",
    "PolicyChange",
    "PreparedView",
    "SchedulerConfiguration",
    "SchedulerProfile",
    "SnapshotTrend",
    "SyncJob",
    "SyncJobKind",
    "SyncJobStatus",
    "SyncJobTrigger",
    "WhatIfRun",
]
