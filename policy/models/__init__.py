"""The app's model registry: Django loads ``policy.models``, and each domain keeps its own
models (``policy.<domain>.models``). Code imports models from their domain, not from here."""

from policy.accounts.models import ApiToken, AuthorizationFailure, PolicyChange
from policy.clusters.models import Cluster, ClusterSnapshot, PreparedView, SnapshotTrend
from policy.decisions.models import ExplanationBase, PlacementDecision, WhatIfRun
from policy.policies.models import (
    DeschedulerConfiguration,
    KoordletThresholdConfig,
    LoadAwareSchedulingArgs,
    NodeMetricCollectPolicy,
    NodeThresholdPolicy,
    SchedulerConfiguration,
    SchedulerProfile,
)
from policy.sync.models import ClusterSyncState, SyncJob

__all__ = [
    "ApiToken",
    "AuthorizationFailure",
    "Cluster",
    "ClusterSnapshot",
    "ClusterSyncState",
    "DeschedulerConfiguration",
    "ExplanationBase",
    "KoordletThresholdConfig",
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
    "WhatIfRun",
]
