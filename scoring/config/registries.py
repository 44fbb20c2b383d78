"""Which plugins each scheduler build registers: in-tree per kube-scheduler release, Koordinator's
koord-scheduler and scheduler-plugins per release.

``NewFramework`` checks every configured name against the binary's registry
(``<Type>Plugin "X" does not exist``); kube-scheduler's ``ValidateKubeSchedulerConfiguration``
does not. A :class:`Registry` is that table for one :class:`~scoring.config.targets.Target`, with
``complete`` saying whether a missing name is certain to fail at startup (an error) or only
unknown to schedboard (a warning).

Sources (read with their tags; see ``docs/scheduler-targets.md``):

- in-tree: ``pkg/scheduler/framework/plugins/registry.go`` and the PRs that added or removed a
  plugin (NodeLabel, NodePreferAvoidPods and ServiceAffinity removed in 1.23, kubernetes PRs
  #105906, #105907 and #105588;
  the v1beta1-only resource scorers with v1beta1 in 1.23, PR #104782; SelectorSpread in 1.29,
  PR #117720; AzureDiskLimits, CinderLimits, EBSLimits and GCEPDLimits in 1.32, PR #124003,
  after leaving the defaults in 1.31, PR #124500; SchedulingGates and
  DynamicResources added in 1.26; NodeDeclaredFeatures and GangScheduling in 1.35). Extension
  points are the 1.35 ones (``pkg/scheduler/framework/plugins/*``), or the last release's for
  removed plugins, less the points added later that are listed in ``_POINT_SINCE``.
- koord-scheduler: ``cmd/koord-scheduler/main.go`` (``koordinatorPlugins``) and ``go.mod`` (the
  Kubernetes it vendors) at v1.4.1, v1.5.0, v1.6.0, v1.7.0 and v1.8.0; extension points are the
  framework methods each plugin's type defines at the tag.
- scheduler-plugins: ``cmd/scheduler/main.go`` at v0.22.6-v0.35.4 and the framework methods of
  each plugin's type in ``pkg/*`` at the tag.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from types import MappingProxyType

from scoring.config.catalog import CATALOG, IN_TREE

FIRST_KNOWN_MINOR = 20
LAST_KNOWN_MINOR = 35


@dataclass(frozen=True)
class RegisteredPlugin:
    """A plugin a scheduler build registers.

    ``points_complete`` says whether ``extension_points`` are every point the plugin implements
    (read from its Go type at the release) or not certain (a plugin not read at its source, or
    the union over several releases).
    """

    name: str
    extension_points: tuple[str, ...]
    args_kind: str | None = None
    points_complete: bool = True

    def implements(self, point: str) -> bool:
        return point in self.extension_points


@dataclass(frozen=True)
class _InTree:
    plugin: RegisteredPlugin
    added: int  # first minor (1.x) that registers it
    removed: int | None = None  # first minor that no longer does


def _p(
    name: str, points: str, args: str | None = None, *, complete: bool = True
) -> RegisteredPlugin:
    return RegisteredPlugin(name, tuple(points.split()), args, complete)


_VOLUME_LIMIT_POINTS = "preFilter filter"

_IN_TREE: tuple[_InTree, ...] = (
    _InTree(_p("PrioritySort", "queueSort"), 18),
    _InTree(_p("NodeUnschedulable", "filter"), 18),
    _InTree(_p("NodeName", "filter"), 18),
    _InTree(_p("TaintToleration", "filter preScore score"), 18),
    _InTree(_p("NodeAffinity", "preFilter filter preScore score", "NodeAffinityArgs"), 18),
    _InTree(_p("NodePorts", "preFilter filter"), 18),
    _InTree(_p("NodeResourcesFit", "preFilter filter preScore score", "NodeResourcesFitArgs"), 18),
    _InTree(_p("VolumeRestrictions", "preFilter filter"), 18),
    _InTree(_p("NodeVolumeLimits", "preFilter filter"), 18),
    _InTree(
        _p(
            "VolumeBinding",
            "preFilter filter preScore score reserve preBind",
            "VolumeBindingArgs",
        ),
        18,
    ),
    _InTree(_p("VolumeZone", "preFilter filter"), 18),
    _InTree(
        _p("PodTopologySpread", "preFilter filter preScore score", "PodTopologySpreadArgs"), 18
    ),
    _InTree(_p("InterPodAffinity", "preFilter filter preScore score", "InterPodAffinityArgs"), 18),
    _InTree(_p("DefaultPreemption", "preEnqueue postFilter", "DefaultPreemptionArgs"), 19),
    _InTree(
        _p(
            "NodeResourcesBalancedAllocation",
            "preScore score",
            "NodeResourcesBalancedAllocationArgs",
        ),
        18,
    ),
    _InTree(_p("ImageLocality", "score"), 18),
    _InTree(_p("DefaultBinder", "bind"), 18),
    _InTree(_p("SchedulingGates", "preEnqueue"), 26),
    _InTree(
        _p(
            "DynamicResources",
            "preEnqueue preFilter filter postFilter score reserve preBind",
            "DynamicResourcesArgs",
        ),
        26,
    ),
    # Alpha in 1.35, gated off; their points were not read from source.
    _InTree(_p("NodeDeclaredFeatures", "preFilter filter", complete=False), 35),
    _InTree(_p("GangScheduling", "preEnqueue permit", complete=False), 35),
    # Removed plugins.
    _InTree(_p("EBSLimits", _VOLUME_LIMIT_POINTS), 18, 32),
    _InTree(_p("GCEPDLimits", _VOLUME_LIMIT_POINTS), 18, 32),
    _InTree(_p("AzureDiskLimits", _VOLUME_LIMIT_POINTS), 18, 32),
    _InTree(_p("CinderLimits", _VOLUME_LIMIT_POINTS), 18, 32),
    _InTree(_p("SelectorSpread", "preScore score"), 18, 29),
    _InTree(_p("NodePreferAvoidPods", "score"), 18, 23),
    _InTree(_p("NodeLabel", "filter score", "NodeLabelArgs"), 18, 23),
    _InTree(
        _p("ServiceAffinity", "preFilter filter preScore score", "ServiceAffinityArgs"), 18, 23
    ),
    _InTree(_p("NodeResourcesLeastAllocated", "score", "NodeResourcesLeastAllocatedArgs"), 18, 23),
    _InTree(_p("NodeResourcesMostAllocated", "score", "NodeResourcesMostAllocatedArgs"), 18, 23),
    _InTree(_p("RequestedToCapacityRatio", "score", "RequestedToCapacityRatioArgs"), 18, 23),
)


# Extension points an in-tree plugin gained after it was added: DefaultPreemption's PreEnqueue
# (asynchronous preemption, kubernetes PR #128170, 1.32), DynamicResources' Score (prioritized
# list scoring, PR #134711, 1.35), NodeResourcesFit's PreScore and Score (taken to arrive with
# its scoringStrategy and v1beta2 in 1.22). The points marked 21 are absent from the plugins'
# Go types at v1.20.2 (``pkg/scheduler/framework/plugins/*``); the release that added each was
# not read, so only 1.20 and before are held to them.
_POINT_SINCE: Mapping[tuple[str, str], int] = MappingProxyType(
    {
        ("DefaultPreemption", "preEnqueue"): 32,
        ("DynamicResources", "score"): 35,
        ("NodeResourcesFit", "preScore"): 22,
        ("NodeResourcesFit", "score"): 22,
        ("NodeAffinity", "preFilter"): 21,
        ("NodeAffinity", "preScore"): 21,
        ("NodeResourcesBalancedAllocation", "preScore"): 21,
        ("VolumeRestrictions", "preFilter"): 21,
        ("VolumeZone", "preFilter"): 21,
        ("NodeVolumeLimits", "preFilter"): 21,
        ("EBSLimits", "preFilter"): 21,
        ("GCEPDLimits", "preFilter"): 21,
        ("AzureDiskLimits", "preFilter"): 21,
        ("CinderLimits", "preFilter"): 21,
        ("VolumeBinding", "preScore"): 21,
        ("VolumeBinding", "score"): 21,
        ("ServiceAffinity", "preScore"): 21,
    }
)


def _as_of(plugin: RegisteredPlugin, minor: int) -> RegisteredPlugin:
    points = tuple(
        p for p in plugin.extension_points if _POINT_SINCE.get((plugin.name, p), 0) <= minor
    )
    return plugin if points == plugin.extension_points else replace(plugin, extension_points=points)


def in_tree_plugins(minor: int) -> dict[str, RegisteredPlugin]:
    """``NewInTreeRegistry()`` of kube-scheduler 1.``minor``."""
    return {
        e.plugin.name: _as_of(e.plugin, minor)
        for e in _IN_TREE
        if e.added <= minor and (e.removed is None or minor < e.removed)
    }


# -- koord-scheduler -------------------------------------------------------------------------

_KOORD_ARGS: Mapping[str, str] = MappingProxyType(
    {
        "LoadAwareScheduling": "LoadAwareSchedulingArgs",
        "NodeNUMAResource": "NodeNUMAResourceArgs",
        "Reservation": "ReservationArgs",
        "Coscheduling": "CoschedulingArgs",
        "DeviceShare": "DeviceShareArgs",
        "ElasticQuota": "ElasticQuotaArgs",
        "NodeResourcesFitPlus": "NodeResourcesFitPlusArgs",
        "ScarceResourceAvoidance": "ScarceResourceAvoidanceArgs",
    }
)


def _koord(points: Mapping[str, str]) -> dict[str, RegisteredPlugin]:
    return {name: _p(name, p, _KOORD_ARGS.get(name)) for name, p in points.items()}


# Extension points: the framework methods each plugin's type defines at the tag
# (``pkg/scheduler/plugins/<plugin>``); Coscheduling lost ``Less`` (QueueSort) in 1.7.
_KOORD_1_4 = {
    "LoadAwareScheduling": "filter score reserve",
    "NodeNUMAResource": "preFilter filter score reserve preBind",
    "Reservation": "preFilter filter postFilter preScore score reserve preBind bind",
    "Coscheduling": "queueSort preFilter postFilter reserve permit postBind",
    "DeviceShare": "preFilter filter score reserve preBind",
    "ElasticQuota": "preFilter postFilter reserve",
    "DefaultPreBind": "preBind",
}
_KOORD_1_6 = {
    **_KOORD_1_4,
    "NodeNUMAResource": "preFilter filter preScore score reserve preBind",
    "DeviceShare": "preFilter filter preScore score reserve preBind",
    "Coscheduling": "preEnqueue queueSort preFilter postFilter reserve permit postBind",
    "NodeResourcesFitPlus": "preScore score",
    "ScarceResourceAvoidance": "preScore score",
}
_KOORD_1_7 = {
    **_KOORD_1_6,
    "LoadAwareScheduling": "preFilter filter score reserve",
    "Coscheduling": "preEnqueue preFilter postFilter reserve permit preBind postBind",
    "SchedulingHint": "preFilter",
}
_KOORD_1_8 = {
    **_KOORD_1_7,
    "Coscheduling": "preEnqueue preFilter postFilter preScore score reserve permit preBind "
    "postBind",
}


@dataclass(frozen=True)
class Release:
    """One release of an out-of-tree scheduler: the Kubernetes it is built on, the config
    versions it reads, and the plugins it adds to the in-tree registry."""

    version: str
    kubernetes_minor: int
    config_versions: tuple[str, ...]
    plugins: Mapping[str, RegisteredPlugin]


KOORD_SCHEDULER_RELEASES: Mapping[str, Release] = MappingProxyType(
    {
        "1.4": Release("1.4", 24, ("v1beta2", "v1beta3"), _koord(_KOORD_1_4)),
        "1.5": Release("1.5", 28, ("v1beta3", "v1"), _koord(_KOORD_1_4)),
        "1.6": Release("1.6", 28, ("v1beta3", "v1"), _koord(_KOORD_1_6)),
        "1.7": Release("1.7", 28, ("v1beta3", "v1"), _koord(_KOORD_1_7)),
        "1.8": Release("1.8", 35, ("v1",), _koord(_KOORD_1_8)),
    }
)


# -- scheduler-plugins ----------------------------------------------------------------------

_SP_ARGS: Mapping[str, str] = MappingProxyType(
    {
        name: f"{name}Args"
        for name in (
            "CapacityScheduling",
            "Coscheduling",
            "LoadVariationRiskBalancing",
            "NetworkOverhead",
            "TopologicalSort",
            "NodeResourcesAllocatable",
            "NodeResourceTopologyMatch",
            "PreemptionToleration",
            "TargetLoadPacking",
            "LowRiskOverCommitment",
            "SySched",
            "Peaks",
        )
    }
)


def _sp_points(minor: int) -> dict[str, str]:
    """scheduler-plugins 0.``minor``: its plugins and the framework methods their types define
    (``cmd/scheduler/main.go`` and ``pkg/*`` at the tag)."""
    points = {
        "CapacityScheduling": "preFilter postFilter reserve",
        "Coscheduling": "queueSort preFilter postFilter permit reserve",
        "LoadVariationRiskBalancing": "score",
        "NodeResourcesAllocatable": "score",
        "NodeResourceTopologyMatch": "filter score",
        "PreemptionToleration": "postFilter",
        "TargetLoadPacking": "score",
        "PodState": "score",
        "QOSSort": "queueSort",
    }
    if minor <= 25:
        points["Coscheduling"] += " postBind"  # dropped in 0.26
    if minor >= 24:
        points["NodeResourceTopologyMatch"] += " reserve"
        points["NetworkOverhead"] = "preFilter filter score"
        points["TopologicalSort"] = "queueSort"
    if minor >= 26:
        points["NodeResourceTopologyMatch"] += " postBind"
        points["LowRiskOverCommitment"] = "preScore score"
    if minor == 22:
        points["CrossNodePreemption"] = "postFilter"  # a sample, registered in 0.22 only
    if minor >= 28:
        points["SySched"] = "score"
    if minor >= 31:
        points["Peaks"] = "score"
    return points


def _sp_release(minor: int) -> Release:
    plugins = {name: _p(name, p, _SP_ARGS.get(name)) for name, p in _sp_points(minor).items()}
    return Release(f"0.{minor}", minor, config_versions_of(minor), MappingProxyType(plugins))


# -- config versions per Kubernetes minor ----------------------------------------------------

# kube-scheduler serves v1beta1 in 1.19-1.22 (removed in 1.23, kubernetes PR #104782), v1beta2
# in 1.22-1.27, v1beta3 in 1.23-1.28 and v1 from 1.25.
CONFIG_VERSION_MINORS: Mapping[str, tuple[int, int | None]] = MappingProxyType(
    {"v1beta1": (19, 23), "v1beta2": (22, 28), "v1beta3": (23, 29), "v1": (25, None)}
)


def config_versions_of(minor: int) -> tuple[str, ...]:
    """The ``kubescheduler.config.k8s.io`` versions kube-scheduler 1.``minor`` decodes."""
    return tuple(
        v
        for v, (first, gone) in CONFIG_VERSION_MINORS.items()
        if first <= minor and (gone is None or minor < gone)
    )


SCHEDULER_PLUGINS_RELEASES: Mapping[str, Release] = MappingProxyType(
    {f"0.{m}": _sp_release(m) for m in range(22, LAST_KNOWN_MINOR + 1)}
)

# -- the registry of a target ----------------------------------------------------------------


@dataclass(frozen=True)
class Registry:
    """The plugins a target's binary registers; ``complete`` when every name is known."""

    plugins: Mapping[str, RegisteredPlugin]
    complete: bool
    description: str

    def lookup(self, name: str) -> RegisteredPlugin | None:
        return self.plugins.get(name)


def _catalog_plugins(*, out_of_tree_only: bool = False) -> dict[str, RegisteredPlugin]:
    """Plugins the engine models (including ones no release registers, like LimitAware)."""
    return {
        spec.name: RegisteredPlugin(spec.name, spec.extension_points, spec.args_kind)
        for spec in CATALOG.values()
        if not (out_of_tree_only and spec.source == IN_TREE)
    }


def _merged(*tables: Mapping[str, RegisteredPlugin]) -> dict[str, RegisteredPlugin]:
    """Union of tables; a name in several keeps the union of its extension points."""
    out: dict[str, RegisteredPlugin] = {}
    for table in tables:
        for name, plugin in table.items():
            known = out.get(name)
            if known is None:
                out[name] = plugin
                continue
            points = known.extension_points + tuple(
                p for p in plugin.extension_points if p not in known.extension_points
            )
            out[name] = RegisteredPlugin(
                name, points, known.args_kind or plugin.args_kind, points_complete=False
            )
    return out


def known_minor(minor: int) -> bool:
    return FIRST_KNOWN_MINOR <= minor <= LAST_KNOWN_MINOR


def kube_scheduler_registry(minor: int) -> Registry:
    plugins = in_tree_plugins(min(max(minor, FIRST_KNOWN_MINOR), LAST_KNOWN_MINOR))
    return Registry(
        MappingProxyType(plugins),
        known_minor(minor),
        f"kube-scheduler 1.{minor} in-tree registry",
    )


def release_registry(flavor: str, release: Release) -> Registry:
    plugins = in_tree_plugins(release.kubernetes_minor)
    plugins.update(release.plugins)
    return Registry(
        MappingProxyType(plugins),
        True,
        f"{flavor} {release.version} registry (in-tree 1.{release.kubernetes_minor} + "
        f"{len(release.plugins)} plugins)",
    )


@cache
def _koord_plugins() -> dict[str, RegisteredPlugin]:
    """Every plugin of any koord-scheduler release, with the union of its extension points."""
    return _merged(*(release.plugins for release in KOORD_SCHEDULER_RELEASES.values()))


def koord_registry(version: str | None, minor: int) -> Registry:
    release = KOORD_SCHEDULER_RELEASES.get(version or "")
    if release is not None:
        return release_registry("koord-scheduler", release)
    return Registry(
        MappingProxyType(_merged(kube_scheduler_registry(minor).plugins, _koord_plugins())),
        False,
        f"koord-scheduler {version or '(version unknown)'}: not a release schedboard knows",
    )


def scheduler_plugins_registry(version: str | None, minor: int) -> Registry:
    release = SCHEDULER_PLUGINS_RELEASES.get(version or "")
    if release is not None:
        return release_registry("scheduler-plugins", release)
    return Registry(
        MappingProxyType(_merged(kube_scheduler_registry(minor).plugins, _sp_plugins())),
        False,
        f"scheduler-plugins {version or '(version unknown)'}: not a release schedboard knows",
    )


def custom_registry(minor: int) -> Registry:
    """Every name schedboard knows at 1.``minor``; never complete (a custom build may add any)."""
    plugins = _merged(
        kube_scheduler_registry(minor).plugins,
        _koord_plugins(),
        _sp_plugins(),
        _catalog_plugins(out_of_tree_only=True),
    )
    return Registry(MappingProxyType(plugins), False, "custom scheduler: registry not known")


def catalog_registry() -> Registry:
    """The plugins the engine's catalog knows, as a complete registry (the checks schedboard
    made before targets existed)."""
    return Registry(MappingProxyType(_catalog_plugins()), True, "schedboard catalog")


def koordinator_plugin_names() -> frozenset[str]:
    return frozenset(_koord_plugins())


@cache
def _sp_plugins() -> dict[str, RegisteredPlugin]:
    """Every plugin of any scheduler-plugins release, with the union of its extension points."""
    return _merged(*(release.plugins for release in SCHEDULER_PLUGINS_RELEASES.values()))


def scheduler_plugins_plugin_names() -> frozenset[str]:
    return frozenset(_sp_plugins())
