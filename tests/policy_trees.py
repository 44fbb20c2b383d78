"""A scheduler configuration with one LoadAware profile and its args, made through the services
as an admin would: the starting point of the editor tests."""

from __future__ import annotations

from policy.accounts.changes import ChangeContext
from policy.clusters.models import Cluster
from policy.policies import services as policies
from policy.policies.models import LoadAwareSchedulingArgs

SYSTEM = ChangeContext.system()


def loadaware_args(cluster: Cluster) -> LoadAwareSchedulingArgs:
    """An unnamed profile enabling LoadAwareScheduling (multiPoint), with args thresholding
    cpu at 45% and memory at 90%."""
    configuration = policies.SchedulerConfigurationService().create({"cluster": cluster}, SYSTEM)
    profile = policies.ProfileService().create(
        {
            "configuration": configuration,
            "scheduler_name": "",
            "plugins": {"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]}},
        },
        SYSTEM,
    )
    return policies.LoadAwareArgsService().create(
        {"profile": profile, "usage_thresholds": {"cpu": 45, "memory": 90}}, SYSTEM
    )
