"""The plugins the engine models, by their kube-scheduler configuration name.

Entries are import strings so a plugin module is loaded only when a profile enables it.
``UNMODELLED`` lists upstream plugins the engine knows but does not evaluate; a profile that
enables one gets it in ``skippedPlugins`` with this reason, never silently dropped.
"""

from __future__ import annotations

import importlib

from scoring.framework import Plugin

REGISTRY: dict[str, str] = {
    "NodeUnschedulable": "scoring.plugins.nodeunschedulable:NodeUnschedulable",
    "NodeName": "scoring.plugins.nodename:NodeName",
    "TaintToleration": "scoring.plugins.tainttoleration:TaintToleration",
    "NodeAffinity": "scoring.plugins.nodeaffinity:NodeAffinity",
    "NodePorts": "scoring.plugins.nodeports:NodePorts",
    "NodeResourcesFit": "scoring.plugins.noderesources:NodeResourcesFit",
    "NodeResourcesBalancedAllocation": "scoring.plugins.noderesources:BalancedAllocation",
    "LoadAwareScheduling": "scoring.plugins.loadaware:LoadAwareScheduling",
    "NodeResourceTopologyMatch": "scoring.plugins.nrt:NodeResourceTopologyMatch",
    "LimitAware": "scoring.plugins.limitaware:LimitAware",
    "ImageLocality": "scoring.plugins.imagelocality:ImageLocality",
    "PodTopologySpread": "scoring.plugins.podtopologyspread:PodTopologySpread",
    "InterPodAffinity": "scoring.plugins.interpodaffinity:InterPodAffinity",
}

UNMODELLED: dict[str, str] = {
    "SchedulingGates": "pre-enqueue gating does not affect node choice",
    "PrioritySort": "queue ordering does not affect node choice",
    "VolumeRestrictions": "volumes are not modelled",
    "NodeVolumeLimits": "volumes are not modelled",
    "VolumeBinding": "volumes are not modelled",
    "VolumeZone": "volumes are not modelled",
    "DefaultPreemption": "preemption is not modelled",
    "DefaultBinder": "binding does not affect node choice",
    "DynamicResources": "dynamic resource allocation is not modelled",
    "EBSLimits": "volumes are not modelled",
    "GCEPDLimits": "volumes are not modelled",
    "AzureDiskLimits": "volumes are not modelled",
    "CinderLimits": "volumes are not modelled",
    "SelectorSpread": "spreading by owner is not modelled",
    # Registered up to 1.22 (v1beta1 targets); removed in 1.23.
    "NodePreferAvoidPods": "the preferAvoidPods node annotation is not modelled",
    "NodeLabel": "node label presence scoring is not modelled",
    "ServiceAffinity": "service affinity is not modelled",
}


# Unmodelled score plugins whose Score is the same on every node in every release schedboard
# targets: VolumeBinding scores only with StorageCapacityScoring (VolumeCapacityPriority before
# 1.33), alpha and off by default (``pkg/scheduler/framework/plugins/volumebinding``).
CONSTANT_SCORERS: frozenset[str] = frozenset({"VolumeBinding"})


# Semantics by Kubernetes release (:mod:`scoring.plugins.noderesources_1_20`): before 1.22 the
# resource scorers are 1.20's; from 1.22 the v1beta1-only names score with NodeResourcesFit's
# strategies (they are registered up to 1.22 only).
FIRST_CURRENT_MINOR = 22
_LEGACY = "scoring.plugins.noderesources_1_20"
BEFORE_1_22: dict[str, str] = {
    "NodeResourcesLeastAllocated": f"{_LEGACY}:LeastAllocated",
    "NodeResourcesMostAllocated": f"{_LEGACY}:MostAllocated",
    "RequestedToCapacityRatio": f"{_LEGACY}:RequestedToCapacityRatio",
    "NodeResourcesBalancedAllocation": f"{_LEGACY}:BalancedAllocation",
}
V1BETA1_ONLY: dict[str, str] = {
    "NodeResourcesLeastAllocated": f"{_LEGACY}:LeastAllocatedAsFit",
    "NodeResourcesMostAllocated": f"{_LEGACY}:MostAllocatedAsFit",
    "RequestedToCapacityRatio": f"{_LEGACY}:RequestedToCapacityRatioAsFit",
}


def _import_string(name: str, kubernetes_minor: int | None) -> str | None:
    if kubernetes_minor is not None and kubernetes_minor < FIRST_CURRENT_MINOR:
        legacy = BEFORE_1_22.get(name)
        if legacy is not None:
            return legacy
    return REGISTRY.get(name) or V1BETA1_ONLY.get(name)


def plugin_class(name: str, kubernetes_minor: int | None = None) -> type[Plugin] | None:
    """The engine's class for a plugin name, or None when the engine does not model it, with
    the semantics of Kubernetes 1.``kubernetes_minor`` (the newest when None)."""
    target = _import_string(name, kubernetes_minor)
    if target is None:
        return None
    module_name, _, attribute = target.partition(":")
    cls: type[Plugin] = getattr(importlib.import_module(module_name), attribute)
    return cls


def skip_reason(name: str) -> str:
    return UNMODELLED.get(name, "plugin is not modelled by the engine")
