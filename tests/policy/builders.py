"""Builders of stored policies and pod manifests shared by the page, sync and browser tests."""

from __future__ import annotations

from typing import Any

from policy.accounts.changes import ChangeContext
from policy.clusters.models import Cluster
from policy.policies import services as policies
from policy.policies.models import (
    LoadAwareSchedulingArgs,
    NodeThresholdPolicy,
    SchedulerConfiguration,
    SchedulerProfile,
)
from policy.web.pages import clear_caches as clear_page_caches

SYSTEM = ChangeContext.system()
POD_YAML = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
spec:
  containers:
  - name: app
    image: nginx
    resources:
      requests: {{cpu: "{cpu}", memory: {memory}}}
"""


def pod_yaml(
    name: str = "web-1", namespace: str = "default", cpu: str = "1", memory: str = "1Gi"
) -> str:
    return POD_YAML.format(name=name, namespace=namespace, cpu=cpu, memory=memory)


def loadaware_configuration(cluster: Cluster, **args: Any) -> Any:
    """A scheduler configuration whose only profile enables LoadAwareScheduling (with ``args``
    when given)."""
    configuration = SchedulerConfiguration.objects.create(cluster=cluster)
    profile = SchedulerProfile.objects.create(
        configuration=configuration,
        scheduler_name="",
        plugins={"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]}},
    )
    if args:
        LoadAwareSchedulingArgs.objects.create(profile=profile, **args)
    clear_page_caches()
    return configuration


def unpushed_policies(cluster: Any, nodes: list[str]) -> NodeThresholdPolicy:
    """A LoadAware profile and a threshold policy on ``nodes``, made through the services (so
    the history has them), never pushed."""
    configuration = policies.SchedulerConfigurationService().create({"cluster": cluster}, SYSTEM)
    policies.ProfileService().create(
        {
            "configuration": configuration,
            "scheduler_name": "",
            "plugins": {"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]}},
        },
        SYSTEM,
    )
    return policies.NodeThresholdPolicyService().create(
        {
            "cluster": cluster,
            "name": "hot-pool",
            "node_names": nodes,
            "usage_thresholds": {"cpu": 55, "memory": 80},
        },
        SYSTEM,
    )


def koord_profile(cluster: Any, **values: Any) -> SchedulerProfile:
    """A profile (``values``) of a new configuration of ``cluster``, whose target is set to
    koord-scheduler 1.7, made through the services."""
    cluster.scheduler_flavor, cluster.scheduler_version = "koord-scheduler", "1.7"
    cluster.save()
    configuration = policies.SchedulerConfigurationService().create({"cluster": cluster}, SYSTEM)
    return policies.ProfileService().create({"configuration": configuration, **values}, SYSTEM)
