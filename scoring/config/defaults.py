"""v1 defaulting: ``SetDefaults_KubeSchedulerConfiguration`` and the default plugins.

Follows ``pkg/scheduler/apis/config/v1/defaults.go`` and ``default_plugins.go`` (Kubernetes 1.35)
on a decoded v1 document (plain dicts, v1 JSON names), in place:

- every default plugin is enabled through ``multiPoint`` (:data:`~scoring.config.catalog.
  DEFAULT_MULTI_POINT`), and the profile's own ``plugins`` are merged into that default set
  (:func:`merge_plugin_set`): an enabled default is replaced in place (order kept, weight
  overridden), other enabled plugins are appended, ``disabled`` removes defaults (``'*'`` all of
  them) and is kept so that multiPoint expansion can honour it;
- every enabled plugin with a known args kind and no ``pluginConfig`` entry gets one with default
  args, appended in name order; existing entries with decoded args are defaulted;
- ``schedulerName`` defaults to ``default-scheduler`` only when there is exactly one profile;
- the scalar defaults (parallelism 16, backoffs 1s/10s, leader election, client connection,
  profiling).

Plugin args in ``pluginConfig`` must already be decoded by the loader: decoded ("typed") args
carry ``apiVersion: kubescheduler.config.k8s.io/v1`` and the plugin's ``kind``; anything else is
raw (``runtime.Unknown``) and left alone.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from scoring.config.catalog import ARGS_API_VERSION, DEFAULT_MULTI_POINT, lookup
from scoring.config.schema import PLUGINS_FIELD_ORDER

DEFAULT_SCHEDULER_NAME = "default-scheduler"
DEFAULT_PARALLELISM = 16
DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE = 0

# pluginsNames() reads these sets (multiPoint and the twelve extension points).
_ALL_SETS = PLUGINS_FIELD_ORDER


def default_plugins() -> dict[str, Any]:
    """``getDefaultPlugins()``: the default plugins, all in ``multiPoint.enabled``."""
    enabled: list[dict[str, Any]] = []
    for name, weight in DEFAULT_MULTI_POINT:
        plugin: dict[str, Any] = {"name": name}
        if weight is not None:
            plugin["weight"] = weight
        enabled.append(plugin)
    return {"multiPoint": {"enabled": enabled}}


def merge_plugin_set(
    default: Mapping[str, Any], custom: Mapping[str, Any], *, in_place: bool = True
) -> dict[str, Any]:
    """``mergePluginSet``: a default set with the user's set applied (see the module docstring).

    Duplicated custom plugins are kept on purpose: the framework reports them
    (``plugin "X" already registered as ...``). Without ``in_place`` (v1beta1's
    ``mergePluginSets``) an enabled default is not replaced: the custom one is appended too.
    """
    disabled_names: set[str] = set()
    disabled: list[dict[str, Any]] = []
    for plugin in list(custom.get("disabled") or []) + list(default.get("disabled") or []):
        name = plugin.get("name", "")
        disabled.append({"name": name})
        disabled_names.add(name)

    custom_enabled = list(custom.get("enabled") or [])
    # A name enabled twice maps to its last index, as Go's map assignment does.
    custom_index = {plugin.get("name", ""): i for i, plugin in enumerate(custom_enabled)}
    if not in_place:
        custom_index = {}
    replaced: set[int] = set()
    enabled: list[dict[str, Any]] = []
    if "*" not in disabled_names:
        for plugin in default.get("enabled") or []:
            name = plugin.get("name", "")
            if name in disabled_names:
                continue
            if name in custom_index:
                i = custom_index[name]
                plugin = custom_enabled[i]
                replaced.add(i)
            enabled.append(copy.deepcopy(dict(plugin)))
    enabled.extend(
        copy.deepcopy(dict(plugin)) for i, plugin in enumerate(custom_enabled) if i not in replaced
    )

    merged: dict[str, Any] = {}
    if enabled:
        merged["enabled"] = enabled
    if disabled:
        merged["disabled"] = disabled
    return merged


def merge_plugins(
    default: dict[str, Any], custom: Mapping[str, Any] | None, *, in_place: bool = True
) -> dict[str, Any]:
    """``mergePlugins``: every plugin set merged; the defaults alone when ``custom`` is nil."""
    if custom is None:
        return default
    return {
        point: merge_plugin_set(
            default.get(point) or {}, custom.get(point) or {}, in_place=in_place
        )
        for point in PLUGINS_FIELD_ORDER
    }


def plugin_names(plugins: Mapping[str, Any]) -> list[str]:
    """``pluginsNames``: every enabled plugin name, sorted."""
    names: set[str] = set()
    for point in _ALL_SETS:
        for plugin in (plugins.get(point) or {}).get("enabled") or []:
            names.add(plugin.get("name", ""))
    return sorted(names)


def is_typed_args(name: str, args: Any) -> bool:
    """Whether a pluginConfig entry holds decoded args of the plugin's registered kind."""
    spec = lookup(name)
    return (
        spec is not None
        and spec.args_kind is not None
        and isinstance(args, Mapping)
        and args.get("apiVersion") == ARGS_API_VERSION
        and args.get("kind") == spec.args_kind
        and spec.has_args
    )


def strip_type_meta(args: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in args.items() if k not in ("apiVersion", "kind")}


def default_args(name: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """Defaulted typed args for plugin ``name``, with ``apiVersion``/``kind`` set."""
    spec = lookup(name)
    if spec is None or spec.args_kind is None:  # pragma: no cover - callers check is_typed_args
        return dict(args)
    defaulted = spec.default_args(strip_type_meta(args))
    return {"apiVersion": ARGS_API_VERSION, "kind": spec.args_kind, **defaulted}


def set_profile_defaults(
    profile: dict[str, Any], defaults: Mapping[str, Any] | None = None, *, in_place: bool = True
) -> None:
    """``setDefaults_KubeSchedulerProfile``: merged plugins, then default plugin args.

    ``defaults`` are the version's default plugins (:func:`default_plugins`, v1 1.35, when None);
    ``in_place`` as for :func:`merge_plugin_set`.
    """
    base = copy.deepcopy(dict(defaults)) if defaults is not None else default_plugins()
    profile["plugins"] = merge_plugins(base, profile.get("plugins"), in_place=in_place)
    configs: list[dict[str, Any]] = profile.setdefault("pluginConfig", [])
    existing: set[str] = set()
    for config in configs:
        name = config.get("name", "")
        existing.add(name)
        if is_typed_args(name, config.get("args")):
            config["args"] = default_args(name, config["args"])
    for name in plugin_names(profile["plugins"]):
        if name in existing:
            continue
        spec = lookup(name)
        if spec is None or spec.args_kind is None or not spec.has_args:
            continue  # out-of-tree (unknown) or no args type
        configs.append({"name": name, "args": default_args(name, {})})
    if not configs:
        del profile["pluginConfig"]


def set_defaults(
    doc: dict[str, Any], plugins: Mapping[str, Any] | None = None, *, in_place: bool = True
) -> None:
    """``SetDefaults_KubeSchedulerConfiguration`` on a decoded v1 document, in place.

    ``plugins`` are the default plugins of the document's version and release
    (:func:`scoring.config.versions.default_plugins`); v1 1.35's when None. ``in_place`` False
    merges them as v1beta1 does (:func:`merge_plugin_set`).
    """
    if doc.get("parallelism") is None:
        doc["parallelism"] = DEFAULT_PARALLELISM

    profiles: list[dict[str, Any]] = doc.get("profiles") or []
    if not profiles:
        profiles = [{}]
    doc["profiles"] = profiles
    # Only apply a default scheduler name when there is a single profile.
    if len(profiles) == 1 and profiles[0].get("schedulerName") is None:
        profiles[0]["schedulerName"] = DEFAULT_SCHEDULER_NAME
    for profile in profiles:
        set_profile_defaults(profile, plugins, in_place=in_place)

    if doc.get("percentageOfNodesToScore") is None:
        doc["percentageOfNodesToScore"] = DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE

    election: dict[str, Any] = doc.setdefault("leaderElection", {})
    if not election.get("resourceLock"):
        election["resourceLock"] = "leases"
    if not election.get("resourceNamespace"):
        election["resourceNamespace"] = "kube-system"
    if not election.get("resourceName"):
        election["resourceName"] = "kube-scheduler"

    client: dict[str, Any] = doc.setdefault("clientConnection", {})
    if not client.get("contentType"):
        client["contentType"] = "application/vnd.kubernetes.protobuf"
    if not client.get("qps"):
        client["qps"] = 50.0
    if not client.get("burst"):
        client["burst"] = 100

    # componentbaseconfigv1alpha1.RecommendedDefaultLeaderElectionConfiguration
    for field_name, value in (
        ("leaseDuration", "15s"),
        ("renewDeadline", "10s"),
        ("retryPeriod", "2s"),
    ):
        if election.get(field_name, "0s") == "0s":
            election[field_name] = value
    if election.get("leaderElect") is None:
        election["leaderElect"] = True

    if doc.get("podInitialBackoffSeconds") is None:
        doc["podInitialBackoffSeconds"] = 1
    if doc.get("podMaxBackoffSeconds") is None:
        doc["podMaxBackoffSeconds"] = 10

    if doc.get("enableProfiling") is None:
        doc["enableProfiling"] = True
    if doc["enableProfiling"] and doc.get("enableContentionProfiling") is None:
        doc["enableContentionProfiling"] = True
