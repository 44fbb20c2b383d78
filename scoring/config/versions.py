"""What differs between ``kubescheduler.config.k8s.io`` v1beta1, v1beta2, v1beta3 and v1.

kube-scheduler decodes a document in its own version, applies that version's defaults
(``pkg/scheduler/apis/config/<version>/defaults.go`` and ``default_plugins.go``) and converts the
result to the internal type, which is validated. Here a decoded document of any version is
turned into the v1 shape the rest of :mod:`scoring.config` works on, with the version's own
default plugins:

- **fields**: v1beta1 (kube-scheduler 1.19-1.22, removed in 1.23 by kubernetes PR #104782) is
  v1beta2's shape without ``preEnqueue`` (``k8s.io/kube-scheduler/config/v1beta1/types.go`` at
  v1.20.2); its addresses have no port rule (1.20 serves on them). v1beta2 also has
  ``healthzBindAddress`` and ``metricsBindAddress`` (deprecated; only empty or port 0 is valid,
  ``v1beta2`` validation) and no ``multiPoint``; v1beta2 and
  v1beta3 have no ``delayCacheUntilActive``; v1beta2 profiles have no
  ``percentageOfNodesToScore``. Conversion drops the two addresses.
- **default plugins**: v1beta2 lists them per extension point (queueSort PrioritySort; score
  weights NodeResourcesBalancedAllocation 1, ImageLocality 1, InterPodAffinity 1,
  NodeResourcesFit 1, NodeAffinity 1, PodTopologySpread 2, TaintToleration 1); the latest
  v1beta2 lists also put VolumeZone and TaintToleration at preFilter, left out here because the
  1.35 registry schedboard checks against does not give TaintToleration a PreFilter (neither
  changes what the engine evaluates); v1beta3 and v1 put them all in ``multiPoint`` with the
  same weights (TaintToleration 3, NodeAffinity 2, NodeResourcesFit 1, PodTopologySpread 2,
  InterPodAffinity 2, NodeResourcesBalancedAllocation 1, ImageLocality 1). Which plugins are in
  the list depends on the release: the cloud volume-limit plugins up to 1.30;
  ``SchedulingGates`` from 1.27 (PodSchedulingReadiness beta; appended last before 1.30, first
  from 1.30); ``DynamicResources`` from 1.34 (DynamicResourceAllocation on by default),
  weighted 2 from 1.35. v1beta1 lists them per extension point as
  ``pkg/scheduler/algorithmprovider/registry.go`` ``getDefaultConfig`` does at v1.20.2 (score
  weights NodeResourcesBalancedAllocation 1, ImageLocality 1, InterPodAffinity 1,
  NodeResourcesLeastAllocated 1, NodeAffinity 1, NodePreferAvoidPods 10000, PodTopologySpread 2,
  TaintToleration 1); that list is used for every release reading v1beta1 (1.19, 1.21 and 1.22
  were not read at their tags).
- **merging**: v1beta1's ``Plugins.Apply`` (``pkg/scheduler/apis/config/types.go``
  ``mergePluginSets`` at v1.20.2) keeps the defaults not disabled and appends every enabled
  plugin, so re-enabling a default plugin without disabling it registers it twice (a startup
  error); later versions replace it in place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from scoring import field_errors as fe
from scoring.config.plugin_args import NODE_RESOURCES_FIT_ARGS
from scoring.config.schema import (
    KUBE_SCHEDULER_CONFIGURATION,
    PLUGINS,
    PROFILE,
    STRING,
    Field,
    ListOf,
    Struct,
)
from scoring.errors import FieldError

GROUP = "kubescheduler.config.k8s.io"
V1BETA1 = "v1beta1"
V1BETA2 = "v1beta2"
V1BETA3 = "v1beta3"
V1 = "v1"
VERSIONS = (V1BETA1, V1BETA2, V1BETA3, V1)


def _without(struct: Struct, *names: str) -> Struct:
    return replace(struct, fields=tuple(f for f in struct.fields if f.name not in names))


def _with_field(struct: Struct, name: str, replacement: Struct) -> Struct:
    fields = tuple(
        replace(f, node=ListOf(replacement) if isinstance(f.node, ListOf) else replacement)
        if f.name == name
        else f
        for f in struct.fields
    )
    return replace(struct, fields=fields)


_V1BETA2_PROFILE = _with_field(
    _without(PROFILE, "percentageOfNodesToScore"), "plugins", _without(PLUGINS, "multiPoint")
)
_ADDRESSES = (
    Field("healthzBindAddress", STRING, pointer=True, omitempty=True),
    Field("metricsBindAddress", STRING, pointer=True, omitempty=True),
)
_V1BETA3_CONFIGURATION = _without(KUBE_SCHEDULER_CONFIGURATION, "delayCacheUntilActive")
_V1BETA2_CONFIGURATION = _with_field(
    replace(_V1BETA3_CONFIGURATION, fields=_V1BETA3_CONFIGURATION.fields + _ADDRESSES),
    "profiles",
    _V1BETA2_PROFILE,
)
_V1BETA1_CONFIGURATION = _with_field(
    _V1BETA2_CONFIGURATION,
    "profiles",
    _with_field(_V1BETA2_PROFILE, "plugins", _without(PLUGINS, "multiPoint", "preEnqueue")),
)
SCHEMAS: Mapping[str, Struct] = {
    V1BETA1: _V1BETA1_CONFIGURATION,
    V1BETA2: _V1BETA2_CONFIGURATION,
    V1BETA3: _V1BETA3_CONFIGURATION,
    V1: KUBE_SCHEDULER_CONFIGURATION,
}


# Args kinds whose v1beta1 shape differs (1.20 ``types_pluginargs.go``): NodeResourcesFitArgs has
# no scoringStrategy (the v1beta1-only plugins score); balanced allocation and dynamic resources
# take no args.
_V1BETA1_ARGS: Mapping[str, Struct | None] = {
    "NodeResourcesFitArgs": _without(NODE_RESOURCES_FIT_ARGS, "scoringStrategy"),
    "NodeResourcesBalancedAllocationArgs": None,
    "DynamicResourcesArgs": None,
}
_V1BETA1_ONLY_ARGS = frozenset(
    {
        "NodeResourcesLeastAllocatedArgs",
        "NodeResourcesMostAllocatedArgs",
        "RequestedToCapacityRatioArgs",
    }
)


def args_schema(api_version: str, kind: str, schema: Struct) -> Struct | None:
    """The schema of args ``kind`` in config version ``api_version`` (``schema`` is its v1
    one); None when the version has no such kind."""
    if api_version == V1BETA1:
        return _V1BETA1_ARGS.get(kind, schema)
    return None if kind in _V1BETA1_ONLY_ARGS else schema


def to_v1beta1_args(doc: dict[str, Any]) -> None:
    """Drop from a defaulted v1beta1 document's args what 1.20 does not have: the args of kinds
    v1beta1 lacks and v1 fields of the others (NodeResourcesFit's default scoringStrategy,
    which 1.20 never scores with)."""
    for profile in doc.get("profiles") or []:
        configs = profile.get("pluginConfig") or []
        kept = []
        for config in configs:
            args = config.get("args")
            kind = args.get("kind") if isinstance(args, Mapping) else None
            schema = _V1BETA1_ARGS.get(kind or "", False)
            if schema is None:
                continue
            if isinstance(schema, Struct) and isinstance(args, dict):
                names = {f.name for f in schema.fields} | {"apiVersion", "kind"}
                config["args"] = {k: v for k, v in args.items() if k in names}
            kept.append(config)
        if kept:
            profile["pluginConfig"] = kept
        else:
            profile.pop("pluginConfig", None)


def _address_errors(doc: Mapping[str, Any]) -> list[FieldError]:
    """v1beta2 ``validateKubeSchedulerConfiguration``: the deprecated addresses may only be
    empty or use port 0."""
    errors: list[FieldError] = []
    for name in ("healthzBindAddress", "metricsBindAddress"):
        value = doc.get(name)
        if not value:
            continue
        _, _, port = str(value).rpartition(":")
        if port != "0":
            errors.append(fe.invalid(name, value, "must be empty or with an explicit 0 port"))
    return errors


def to_v1_shape(api_version: str, doc: dict[str, Any]) -> list[FieldError]:
    """Convert a decoded document to the v1 shape in place; errors of fields v1 lacks."""
    if api_version not in (V1BETA1, V1BETA2):
        return []
    errors = _address_errors(doc) if api_version == V1BETA2 else []
    doc.pop("healthzBindAddress", None)
    doc.pop("metricsBindAddress", None)
    return errors


# -- default plugins ---------------------------------------------------------------------------


def _multi_point(minor: int) -> list[tuple[str, int | None]]:
    """``getDefaultPlugins().MultiPoint.Enabled`` of v1beta3/v1 in release 1.``minor``."""
    volume_limits = minor <= 30
    plugins: list[tuple[str, int | None]] = [
        ("PrioritySort", None),
        ("NodeUnschedulable", None),
        ("NodeName", None),
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodePorts", None),
        ("NodeResourcesFit", 1),
        ("VolumeRestrictions", None),
    ]
    if volume_limits:
        plugins += [("EBSLimits", None), ("GCEPDLimits", None)]
    plugins.append(("NodeVolumeLimits", None))
    if volume_limits:
        plugins.append(("AzureDiskLimits", None))
    plugins += [
        ("VolumeBinding", None),
        ("VolumeZone", None),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
    ]
    if minor >= 34:
        plugins.append(("DynamicResources", 2 if minor >= 35 else None))
    plugins += [
        ("DefaultPreemption", None),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
        ("DefaultBinder", None),
    ]
    if minor >= 30:
        plugins.insert(0, ("SchedulingGates", None))
    elif minor >= 27:
        plugins.append(("SchedulingGates", None))
    return plugins


def _plugin(name: str, weight: int | None = None) -> dict[str, Any]:
    return {"name": name} if weight is None else {"name": name, "weight": weight}


def _enabled(*plugins: dict[str, Any]) -> dict[str, Any]:
    return {"enabled": list(plugins)}


# The filters both per-point versions list by default, in order (v1beta2 ``getDefaultPlugins``,
# and 1.20's ``getDefaultConfig`` for v1beta1).
_FILTERS = (
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "VolumeRestrictions",
    "EBSLimits",
    "GCEPDLimits",
    "NodeVolumeLimits",
    "AzureDiskLimits",
    "VolumeBinding",
    "VolumeZone",
    "PodTopologySpread",
    "InterPodAffinity",
)


def _v1beta2_defaults(minor: int) -> dict[str, Any]:
    """v1beta2 ``getDefaultPlugins`` (see the module docstring for the preFilter list)."""

    p = _plugin
    plugins: dict[str, Any] = {
        "queueSort": _enabled(p("PrioritySort")),
        "preFilter": _enabled(
            p("NodeResourcesFit"),
            p("NodePorts"),
            p("VolumeRestrictions"),
            p("PodTopologySpread"),
            p("InterPodAffinity"),
            p("VolumeBinding"),
            p("NodeAffinity"),
        ),
        "filter": _enabled(*map(p, _FILTERS)),
        "postFilter": _enabled(p("DefaultPreemption")),
        "preScore": _enabled(
            p("InterPodAffinity"), p("PodTopologySpread"), p("TaintToleration"), p("NodeAffinity")
        ),
        "score": _enabled(
            p("NodeResourcesBalancedAllocation", 1),
            p("ImageLocality", 1),
            p("InterPodAffinity", 1),
            p("NodeResourcesFit", 1),
            p("NodeAffinity", 1),
            p("PodTopologySpread", 2),
            p("TaintToleration", 1),
        ),
        "reserve": _enabled(p("VolumeBinding")),
        "preBind": _enabled(p("VolumeBinding")),
        "bind": _enabled(p("DefaultBinder")),
    }
    if minor >= 27:
        plugins["preEnqueue"] = _enabled(p("SchedulingGates"))
    return plugins


def _v1beta1_defaults() -> dict[str, Any]:
    """``getDefaultConfig`` of ``pkg/scheduler/algorithmprovider/registry.go`` at v1.20.2."""

    p = _plugin
    return {
        "queueSort": _enabled(p("PrioritySort")),
        "preFilter": _enabled(
            p("NodeResourcesFit"),
            p("NodePorts"),
            p("PodTopologySpread"),
            p("InterPodAffinity"),
            p("VolumeBinding"),
        ),
        "filter": _enabled(*map(p, _FILTERS)),
        "postFilter": _enabled(p("DefaultPreemption")),
        "preScore": _enabled(p("InterPodAffinity"), p("PodTopologySpread"), p("TaintToleration")),
        "score": _enabled(
            p("NodeResourcesBalancedAllocation", 1),
            p("ImageLocality", 1),
            p("InterPodAffinity", 1),
            p("NodeResourcesLeastAllocated", 1),
            p("NodeAffinity", 1),
            p("NodePreferAvoidPods", 10000),
            p("PodTopologySpread", 2),
            p("TaintToleration", 1),
        ),
        "reserve": _enabled(p("VolumeBinding")),
        "preBind": _enabled(p("VolumeBinding")),
        "bind": _enabled(p("DefaultBinder")),
    }


def default_plugins(api_version: str, minor: int) -> dict[str, Any]:
    """``getDefaultPlugins()`` of config version ``api_version`` in kube-scheduler 1.``minor``."""
    if api_version == V1BETA1:
        return _v1beta1_defaults()
    if api_version == V1BETA2:
        return _v1beta2_defaults(minor)
    return {"multiPoint": {"enabled": [_plugin(n, w) for n, w in _multi_point(minor)]}}


def invalid_plugins(api_version: str, minor: int) -> tuple[str, ...]:
    """Names ``validatePluginConfig`` rejects in a document of this version (removed from it):
    SelectorSpread from v1 (1.25, KEP-785), the cloud volume-limit plugins from 1.32."""
    if api_version != V1:
        return ()
    if minor >= 32:
        return ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
    return ("SelectorSpread",)
