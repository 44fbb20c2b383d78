"""What differs between ``kubescheduler.config.k8s.io`` v1beta2, v1beta3 and v1.

kube-scheduler decodes a document in its own version, applies that version's defaults
(``pkg/scheduler/apis/config/<version>/defaults.go`` and ``default_plugins.go``) and converts the
result to the internal type, which is validated. Here a decoded document of any version is
turned into the v1 shape the rest of :mod:`scoring.config` works on, with the version's own
default plugins:

- **fields**: v1beta2 also has ``healthzBindAddress`` and ``metricsBindAddress`` (deprecated;
  only empty or port 0 is valid, ``v1beta2`` validation) and no ``multiPoint``; v1beta2 and
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
  weighted 2 from 1.35.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from scoring import field_errors as fe
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
V1BETA2 = "v1beta2"
V1BETA3 = "v1beta3"
V1 = "v1"
VERSIONS = (V1BETA2, V1BETA3, V1)


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
SCHEMAS: Mapping[str, Struct] = {
    V1BETA2: _V1BETA2_CONFIGURATION,
    V1BETA3: _V1BETA3_CONFIGURATION,
    V1: KUBE_SCHEDULER_CONFIGURATION,
}


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
    if api_version != V1BETA2:
        return []
    errors = _address_errors(doc)
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


def _v1beta2_defaults(minor: int) -> dict[str, Any]:
    """v1beta2 ``getDefaultPlugins`` (see the module docstring for the preFilter list)."""

    def enabled(*plugins: dict[str, Any]) -> dict[str, Any]:
        return {"enabled": list(plugins)}

    p = _plugin
    plugins: dict[str, Any] = {
        "queueSort": enabled(p("PrioritySort")),
        "preFilter": enabled(
            p("NodeResourcesFit"),
            p("NodePorts"),
            p("VolumeRestrictions"),
            p("PodTopologySpread"),
            p("InterPodAffinity"),
            p("VolumeBinding"),
            p("NodeAffinity"),
        ),
        "filter": enabled(
            p("NodeUnschedulable"),
            p("NodeName"),
            p("TaintToleration"),
            p("NodeAffinity"),
            p("NodePorts"),
            p("NodeResourcesFit"),
            p("VolumeRestrictions"),
            p("EBSLimits"),
            p("GCEPDLimits"),
            p("NodeVolumeLimits"),
            p("AzureDiskLimits"),
            p("VolumeBinding"),
            p("VolumeZone"),
            p("PodTopologySpread"),
            p("InterPodAffinity"),
        ),
        "postFilter": enabled(p("DefaultPreemption")),
        "preScore": enabled(
            p("InterPodAffinity"), p("PodTopologySpread"), p("TaintToleration"), p("NodeAffinity")
        ),
        "score": enabled(
            p("NodeResourcesBalancedAllocation", 1),
            p("ImageLocality", 1),
            p("InterPodAffinity", 1),
            p("NodeResourcesFit", 1),
            p("NodeAffinity", 1),
            p("PodTopologySpread", 2),
            p("TaintToleration", 1),
        ),
        "reserve": enabled(p("VolumeBinding")),
        "preBind": enabled(p("VolumeBinding")),
        "bind": enabled(p("DefaultBinder")),
    }
    if minor >= 27:
        plugins["preEnqueue"] = enabled(p("SchedulingGates"))
    return plugins


def default_plugins(api_version: str, minor: int) -> dict[str, Any]:
    """``getDefaultPlugins()`` of config version ``api_version`` in kube-scheduler 1.``minor``."""
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
