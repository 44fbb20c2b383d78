"""Every plugin schedboard knows: its extension points, args kind, defaulting and validation.

This is the registry ``NewFramework`` would consult. A plugin name missing here is reported as
``<Type>Plugin "X" does not exist``; a plugin listed at an extension point it does not implement
as ``plugin "X" does not extend <Type>Plugin plugin``.

In-tree plugins are those of the kube-scheduler 1.35 registry that the default profile enables,
with the extension points their Go types implement (``pkg/scheduler/framework/plugins``, checked
against ``pkg/scheduler/apis/config/testing/defaults``). ``DynamicResources`` is in the 1.35
default profile: ``DynamicResourceAllocation`` is GA and on, so ``getDefaultPlugins`` inserts it
just before ``DefaultPreemption``; it implements Score since 1.35 (prioritized-list scoring,
kubernetes PR #134711) and has default weight 2 (from the upstream ``default_plugins.go``; earlier
releases had no weight, as the plugin had no Score). Not catalogued: the alpha, gated-off 1.35
plugins ``NodeDeclaredFeatures`` and ``GangScheduling``.

Out-of-tree plugins resolve their args module lazily (``scoring.plugins.<x>.args`` with
``default_args(args)`` and ``validate_args(args, path)``); while a module cannot be imported, its
args pass through unchanged and unvalidated.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType, ModuleType
from typing import Any

from scoring.config.plugin_args import IN_TREE_ARGS
from scoring.errors import FieldError

# v1 JSON names of the extension points the framework runs, in ``v1.Plugins`` order.
EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)

# The Go interface each extension point requires (used in NewFramework's messages).
PLUGIN_TYPE_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "preEnqueue": "PreEnqueuePlugin",
        "queueSort": "QueueSortPlugin",
        "preFilter": "PreFilterPlugin",
        "filter": "FilterPlugin",
        "postFilter": "PostFilterPlugin",
        "preScore": "PreScorePlugin",
        "score": "ScorePlugin",
        "reserve": "ReservePlugin",
        "permit": "PermitPlugin",
        "preBind": "PreBindPlugin",
        "bind": "BindPlugin",
        "postBind": "PostBindPlugin",
    }
)

ARGS_API_VERSION = "kubescheduler.config.k8s.io/v1"
ARGS_GROUP = "kubescheduler.config.k8s.io"

IN_TREE = "kube-scheduler"
KOORDINATOR = "koordinator"
SCHEDULER_PLUGINS = "scheduler-plugins"


@dataclass(frozen=True)
class PluginSpec:
    """One known plugin.

    ``default_weight`` is the weight the default profile gives it (None when it is not in the
    default profile or has no weight there); ``args_module`` is the lazily imported module of an
    out-of-tree plugin's args.
    """

    name: str
    extension_points: tuple[str, ...]
    source: str
    description: str
    args_kind: str | None = None
    in_default_profile: bool = False
    default_weight: int | None = None
    args_module: str | None = None

    def implements(self, point: str) -> bool:
        return point in self.extension_points

    @property
    def has_args(self) -> bool:
        """Whether args of this plugin are decoded, defaulted and validated (vs kept raw)."""
        if self.args_kind is None:
            return False
        return self.args_kind in IN_TREE_ARGS or self.args_module is not None

    def _module(self) -> ModuleType | None:
        """The out-of-tree args module, imported on first use (it imports the catalog)."""
        return importlib.import_module(self.args_module) if self.args_module else None

    def default_args(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Defaulted v1 args (without ``apiVersion``/``kind``); unchanged when unknown."""
        in_tree = IN_TREE_ARGS.get(self.args_kind or "")
        if in_tree is not None:
            return in_tree.defaulted(args)
        module = self._module()
        if module is None:
            return dict(args)
        result: dict[str, Any] = module.default_args(args)
        return result

    def validate_args(self, args: Mapping[str, Any], path: str) -> list[FieldError]:
        """Every error in (defaulted) args, with paths under ``path``."""
        in_tree = IN_TREE_ARGS.get(self.args_kind or "")
        if in_tree is not None:
            return in_tree.validate(args, path)
        module = self._module()
        if module is None:
            return []
        result: list[FieldError] = module.validate_args(args, path)
        return result

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "extensionPoints": list(self.extension_points),
            "source": self.source,
            "description": self.description,
            "argsKind": self.args_kind,
            "inDefaultProfile": self.in_default_profile,
            "defaultWeight": self.default_weight,
        }


_PLUGINS = (
    # The default profile, in getDefaultPlugins order (the multiPoint order).
    PluginSpec(
        "SchedulingGates",
        ("preEnqueue",),
        IN_TREE,
        "Keeps pods with spec.schedulingGates out of the active queue.",
        in_default_profile=True,
    ),
    PluginSpec(
        "PrioritySort",
        ("queueSort",),
        IN_TREE,
        "Orders the scheduling queue by pod priority.",
        in_default_profile=True,
    ),
    PluginSpec(
        "NodeUnschedulable",
        ("filter",),
        IN_TREE,
        "Filters out nodes with spec.unschedulable unless tolerated.",
        in_default_profile=True,
    ),
    PluginSpec(
        "NodeName",
        ("filter",),
        IN_TREE,
        "Filters out nodes other than spec.nodeName when it is set.",
        in_default_profile=True,
    ),
    PluginSpec(
        "TaintToleration",
        ("filter", "preScore", "score"),
        IN_TREE,
        "Filters on NoSchedule/NoExecute taints; scores PreferNoSchedule taints.",
        in_default_profile=True,
        default_weight=3,
    ),
    PluginSpec(
        "NodeAffinity",
        ("preFilter", "filter", "preScore", "score"),
        IN_TREE,
        "Node selector and node affinity (required and preferred).",
        args_kind="NodeAffinityArgs",
        in_default_profile=True,
        default_weight=2,
    ),
    PluginSpec(
        "NodePorts",
        ("preFilter", "filter"),
        IN_TREE,
        "Filters out nodes where the pod's host ports are taken.",
        in_default_profile=True,
    ),
    PluginSpec(
        "NodeResourcesFit",
        ("preFilter", "filter", "preScore", "score"),
        IN_TREE,
        "Resource requests against allocatable; LeastAllocated/MostAllocated/RTCR scoring.",
        args_kind="NodeResourcesFitArgs",
        in_default_profile=True,
        default_weight=1,
    ),
    PluginSpec(
        "VolumeRestrictions",
        ("preFilter", "filter"),
        IN_TREE,
        "Volume access-mode and provider restrictions.",
        in_default_profile=True,
    ),
    PluginSpec(
        "NodeVolumeLimits",
        ("preFilter", "filter"),
        IN_TREE,
        "CSI volume count limits per node.",
        in_default_profile=True,
    ),
    PluginSpec(
        "VolumeBinding",
        ("preFilter", "filter", "preScore", "score", "reserve", "preBind"),
        IN_TREE,
        "PVC binding and provisioning; capacity scoring is gated (StorageCapacityScoring).",
        args_kind="VolumeBindingArgs",
        in_default_profile=True,
    ),
    PluginSpec(
        "VolumeZone",
        ("preFilter", "filter"),
        IN_TREE,
        "Volume topology (zone) requirements.",
        in_default_profile=True,
    ),
    PluginSpec(
        "PodTopologySpread",
        ("preFilter", "filter", "preScore", "score"),
        IN_TREE,
        "Topology spread constraints.",
        args_kind="PodTopologySpreadArgs",
        in_default_profile=True,
        default_weight=2,
    ),
    PluginSpec(
        "InterPodAffinity",
        ("preFilter", "filter", "preScore", "score"),
        IN_TREE,
        "Inter-pod affinity and anti-affinity.",
        args_kind="InterPodAffinityArgs",
        in_default_profile=True,
        default_weight=2,
    ),
    PluginSpec(
        "DynamicResources",
        ("preEnqueue", "preFilter", "filter", "postFilter", "score", "reserve", "preBind"),
        IN_TREE,
        "Dynamic resource allocation (ResourceClaims).",
        args_kind="DynamicResourcesArgs",
        in_default_profile=True,
        default_weight=2,
    ),
    PluginSpec(
        "DefaultPreemption",
        ("preEnqueue", "postFilter"),
        IN_TREE,
        "Preemption of lower-priority pods when no node fits.",
        args_kind="DefaultPreemptionArgs",
        in_default_profile=True,
    ),
    PluginSpec(
        "NodeResourcesBalancedAllocation",
        ("preScore", "score"),
        IN_TREE,
        "Favours nodes whose resource usage stays balanced.",
        args_kind="NodeResourcesBalancedAllocationArgs",
        in_default_profile=True,
        default_weight=1,
    ),
    PluginSpec(
        "ImageLocality",
        ("score",),
        IN_TREE,
        "Favours nodes that already have the pod's container images.",
        in_default_profile=True,
        default_weight=1,
    ),
    PluginSpec(
        "DefaultBinder",
        ("bind",),
        IN_TREE,
        "Binds the pod to the node through the API server.",
        in_default_profile=True,
    ),
    # Out-of-tree plugins the engine supports.
    PluginSpec(
        "LoadAwareScheduling",
        ("preFilter", "filter", "score", "reserve"),
        KOORDINATOR,
        "Koordinator load-aware scheduling on NodeMetric usage and thresholds.",
        args_kind="LoadAwareSchedulingArgs",
        args_module="scoring.plugins.loadaware.args",
    ),
    PluginSpec(
        "NodeResourceTopologyMatch",
        ("preFilter", "filter", "score", "reserve", "postBind"),
        SCHEDULER_PLUGINS,
        "NUMA-aware placement from NodeResourceTopology objects.",
        args_kind="NodeResourceTopologyMatchArgs",
        args_module="scoring.plugins.nrt.args",
    ),
    PluginSpec(
        "LimitAware",
        ("preFilter", "filter", "preScore", "score", "reserve"),
        KOORDINATOR,
        "Resource-limit-aware filtering and scoring (Koordinator LimitAware, KEP-217).",
        args_kind="LimitAwareArgs",
        args_module="scoring.plugins.limitaware.args",
    ),
)

CATALOG: Mapping[str, PluginSpec] = MappingProxyType({p.name: p for p in _PLUGINS})

# In-tree plugins only kube-scheduler 1.19-1.22 register, for ``kubescheduler.config.k8s.io/
# v1beta1`` documents (removed with v1beta1 in 1.23, kubernetes PR #104782): their args are
# decoded, defaulted and validated; they are not in the 1.35 catalog above.
LEGACY: Mapping[str, PluginSpec] = MappingProxyType(
    {
        p.name: p
        for p in (
            PluginSpec(
                "NodeResourcesLeastAllocated",
                ("score",),
                IN_TREE,
                "Favours nodes with less requested (1.20 LeastAllocated; v1beta1 only).",
                args_kind="NodeResourcesLeastAllocatedArgs",
            ),
            PluginSpec(
                "NodeResourcesMostAllocated",
                ("score",),
                IN_TREE,
                "Favours nodes with more requested (1.20 MostAllocated; v1beta1 only).",
                args_kind="NodeResourcesMostAllocatedArgs",
            ),
            PluginSpec(
                "RequestedToCapacityRatio",
                ("score",),
                IN_TREE,
                "Scores utilization through a configured shape (1.20; v1beta1 only).",
                args_kind="RequestedToCapacityRatioArgs",
            ),
        )
    }
)

# ``getDefaultPlugins``: the default profile's multiPoint.enabled, (name, weight or None).
DEFAULT_MULTI_POINT: tuple[tuple[str, int | None], ...] = tuple(
    (p.name, p.default_weight) for p in _PLUGINS if p.in_default_profile
)

# v1 kinds removed from the registry: validation rejects them (not in multiPoint).
INVALID_V1_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")


def known_plugins() -> tuple[PluginSpec, ...]:
    """Every plugin the engine's configuration knows, default profile first (for UIs)."""
    return _PLUGINS


def lookup(name: str) -> PluginSpec | None:
    """The catalogued plugin, else a v1beta1-only one (:data:`LEGACY`)."""
    return CATALOG.get(name) or LEGACY.get(name)
