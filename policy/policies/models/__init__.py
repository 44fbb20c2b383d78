"""What admins edit: scheduler configurations and profiles, LoadAware args, node threshold and
NodeMetric collect policies."""

from policy.policies.models.descheduler import DeschedulerConfiguration, KoordletThresholdConfig
from policy.policies.models.loadaware import LoadAwareSchedulingArgs
from policy.policies.models.nodemetrics import NodeMetricCollectPolicy
from policy.policies.models.scheduler import SchedulerConfiguration, SchedulerProfile
from policy.policies.models.thresholds import NodeThresholdPolicy

__all__ = [
    "DeschedulerConfiguration",
    "KoordletThresholdConfig",
    "LoadAwareSchedulingArgs",
    "NodeMetricCollectPolicy",
    "NodeThresholdPolicy",
    "SchedulerConfiguration",
    "SchedulerProfile",
]
