"""The demo cluster's scheduler configuration and policies."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from policy.clusters.models import Cluster
from scoring import LOADAWARE


def seed_demo_policies(cluster: Cluster) -> bool:
    """Give a cluster without a scheduler configuration the demo's, recorded in the history as
    a system change: ``default-scheduler`` spreading with Koordinator's LoadAwareScheduling
    (its default args), and ``batch-scheduler`` (the demo's batch pods) packing nodes
    (NodeResourcesFit MostAllocated) under the same LoadAware guard; and a node threshold
    policy giving the memory-optimized pool its own thresholds (not pushed yet, so the sync
    page has something to show); and Koordinator's v1.7 chart's koord-descheduler (LowNodeLoad
    enabled) and koordlet documents, as a refresh would read them. False when the cluster
    already has a configuration."""
    from policy.accounts.changes import ChangeContext
    from policy.policies import descheduler, koordinator_chart
    from policy.policies.models import SchedulerConfiguration
    from policy.policies.services import (
        LoadAwareArgsService,
        NodeThresholdPolicyService,
        ProfileService,
        SchedulerConfigurationService,
    )

    if SchedulerConfiguration.objects.filter(cluster=cluster).exists():
        return False
    ctx = ChangeContext.system()
    with transaction.atomic():
        configuration = SchedulerConfigurationService().create({"cluster": cluster}, ctx)
        load_aware = {"multiPoint": {"enabled": [{"name": LOADAWARE}]}}
        packing = [
            {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}
        ]
        for position, (name, plugin_config) in enumerate(
            (("default-scheduler", []), ("batch-scheduler", packing))
        ):
            profile = ProfileService().create(
                {
                    "configuration": configuration,
                    "position": position,
                    "scheduler_name": name,
                    "plugins": load_aware,
                    "plugin_config": plugin_config,
                },
                ctx,
            )
            LoadAwareArgsService().create({"profile": profile}, ctx)
        NodeThresholdPolicyService().create(
            {
                "cluster": cluster,
                "name": "memory-pool",
                "description": "Memory-optimized nodes: more cpu headroom, less memory.",
                "node_selector": {"matchLabels": {"pool": "memory"}},
                "usage_thresholds": {"cpu": 80, "memory": 85},
            },
            ctx,
        )
        now = timezone.now()
        descheduler.adopt_descheduler(cluster, koordinator_chart.DESCHEDULER_CONFIG, now)
        descheduler.adopt_koordlet(cluster, koordinator_chart.RESOURCE_THRESHOLD_CONFIG, now)
    return True
