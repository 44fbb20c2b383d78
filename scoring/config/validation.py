"""``ValidateKubeSchedulerConfiguration`` (Kubernetes 1.35) on a defaulted v1 document.

Rules, paths (v1 JSON names) and messages follow
``pkg/scheduler/apis/config/validation/validation.go`` and the component-base validators of
``clientConnection`` and ``leaderElection`` (k8s.io/component-base v0.35). Every error is
collected, in Go's order. Where Go iterates a map (the extension points checked for removed
plugins), the keys are visited in sorted order so the output is deterministic.

Plugin args are validated for every ``pluginConfig`` entry whose args were decoded (see
:func:`~scoring.config.defaults.is_typed_args`), through the catalog: the in-tree validators of
:mod:`~scoring.config.plugin_args` and the out-of-tree plugins' own ``validate_args``. That
includes ``NodeResourcesFit``, which upstream validates only when the plugin is constructed (see
:func:`~scoring.config.plugin_args.validate_node_resources_fit`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scoring import field_errors as fe
from scoring.config.catalog import ARGS_API_VERSION, INVALID_V1_PLUGINS, lookup
from scoring.config.defaults import is_typed_args, strip_type_meta
from scoring.durations import parse_duration
from scoring.errors import FieldError
from scoring.k8s_names import is_extended_resource_name, is_qualified_name

API_VERSION = ARGS_API_VERSION

_STAGES = (
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


def _client_connection(client: Mapping[str, Any]) -> list[FieldError]:
    burst = client.get("burst", 0)
    if burst < 0:
        return [fe.invalid("clientConnection.burst", burst, "must be non-negative")]
    return []


def _leader_election(election: Mapping[str, Any]) -> list[FieldError]:
    """component-base ``ValidateLeaderElectionConfiguration`` (only when leaderElect is true)."""
    errs: list[FieldError] = []
    if not election.get("leaderElect"):
        return errs
    path = "leaderElection"
    lease = parse_duration(election.get("leaseDuration", "0s"))
    renew = parse_duration(election.get("renewDeadline", "0s"))
    retry = parse_duration(election.get("retryPeriod", "0s"))
    if lease <= 0:
        errs.append(
            fe.invalid(
                fe.child(path, "leaseDuration"),
                election.get("leaseDuration"),
                "must be greater than zero",
            )
        )
    if renew <= 0:
        errs.append(
            fe.invalid(
                fe.child(path, "renewDeadline"),
                election.get("renewDeadline"),
                "must be greater than zero",
            )
        )
    if retry <= 0:
        errs.append(
            fe.invalid(
                fe.child(path, "retryPeriod"),
                election.get("retryPeriod"),
                "must be greater than zero",
            )
        )
    if lease <= renew:
        errs.append(
            fe.invalid(
                fe.child(path, "leaseDuration"),
                election.get("renewDeadline"),
                "must be greater than `RenewDeadline`",
            )
        )
    for name in ("resourceLock", "resourceNamespace", "resourceName"):
        if not election.get(name):
            errs.append(fe.required(fe.child(path, name)))
    return errs


def _percentage(path: str, value: int | None) -> list[FieldError]:
    if value is not None and not 0 <= value <= 100:
        return [fe.invalid(path, value, "not in valid range [0-100]")]
    return []


def _invalid_plugin_detail(name: str, invalid: Sequence[str]) -> str | None:
    if name in invalid:
        return (
            f'was invalid in version "{API_VERSION}" '
            f'(KubeSchedulerConfiguration is version "{API_VERSION}")'
        )
    return None


def _plugin_config(
    profile: Mapping[str, Any], path: str, invalid: Sequence[str]
) -> list[FieldError]:
    """``validatePluginConfig``: removed plugins, repeated configs, plugin args."""
    errs: list[FieldError] = []
    plugins = profile.get("plugins")
    if plugins is not None:
        plugins_path = fe.child(path, "plugins")
        for stage in sorted(_STAGES):
            for k, plugin in enumerate((plugins.get(stage) or {}).get("enabled") or []):
                name = plugin.get("name", "")
                detail = _invalid_plugin_detail(name, invalid)
                if detail:
                    errs.append(
                        fe.invalid(
                            fe.index(fe.child(plugins_path, stage, "enabled"), k), name, detail
                        )
                    )
    seen: set[str] = set()
    for j, config in enumerate(profile.get("pluginConfig") or []):
        config_path = fe.index(fe.child(path, "pluginConfig"), j)
        name = config.get("name", "")
        args = config.get("args")
        if name in seen:
            errs.append(fe.duplicate(config_path, name))
        else:
            seen.add(name)
        detail = _invalid_plugin_detail(name, invalid)
        if detail:
            errs.append(fe.invalid(config_path, name, detail))
            continue
        spec = lookup(name)
        if spec is not None and is_typed_args(name, args):
            errs.extend(spec.validate_args(strip_type_meta(args), fe.child(config_path, "args")))
    return errs


def _profile(profile: Mapping[str, Any], path: str, invalid: Sequence[str]) -> list[FieldError]:
    """``validateKubeSchedulerProfile``."""
    errs: list[FieldError] = []
    if not profile.get("schedulerName"):
        errs.append(fe.required(fe.child(path, "schedulerName")))
    errs.extend(
        _percentage(
            fe.child(path, "percentageOfNodesToScore"), profile.get("percentageOfNodesToScore")
        )
    )
    errs.extend(_plugin_config(profile, path, invalid))
    return errs


def _normalized_set(plugin_set: Mapping[str, Any]) -> tuple[tuple[tuple[str, int], ...], ...]:
    """A PluginSet as ``apiequality.Semantic.DeepEqual`` compares the internal type."""
    enabled = tuple(
        (p.get("name", ""), p.get("weight") or 0) for p in plugin_set.get("enabled") or []
    )
    disabled = tuple((p.get("name", ""), 0) for p in plugin_set.get("disabled") or [])
    return enabled, disabled


def _config_args(config: Mapping[str, Any]) -> Any:
    args = config.get("args")
    return strip_type_meta(args) if isinstance(args, Mapping) else args


def _common_queue_sort(profiles: Sequence[Mapping[str, Any]]) -> list[FieldError]:
    """``validateCommonQueueSort``: profile 0's explicit queueSort set is the canon."""
    errs: list[FieldError] = []
    first = profiles[0]
    canon = (first.get("plugins") or {}).get("queueSort") or {}
    enabled = canon.get("enabled") or []
    queue_sort_name = enabled[0].get("name", "") if enabled else ""
    if len(enabled) > 1:
        errs.append(
            fe.invalid(
                "profiles[0].plugins.queueSort.Enabled",
                len(enabled),
                "only one queue sort plugin can be enabled",
            )
        )
    queue_sort_args: Any = None
    for config in first.get("pluginConfig") or []:
        if queue_sort_name and config.get("name") == queue_sort_name:
            queue_sort_args = _config_args(config)
    for i in range(1, len(profiles)):
        path = fe.index("profiles", i)
        current = (profiles[i].get("plugins") or {}).get("queueSort") or {}
        if _normalized_set(canon) != _normalized_set(current):
            errs.append(
                fe.invalid(
                    fe.child(path, "plugins", "queueSort"),
                    current,
                    "must be the same for all profiles",
                )
            )
        for config in profiles[i].get("pluginConfig") or []:
            if config.get("name") == queue_sort_name and _config_args(config) != queue_sort_args:
                errs.append(
                    fe.invalid(
                        fe.child(path, "pluginConfig", "args"),
                        _config_args(config),
                        "queueSort must be the same for all profiles",
                    )
                )
    return errs


def _extenders(extenders: Sequence[Mapping[str, Any]]) -> list[FieldError]:
    """``validateExtenders``."""
    errs: list[FieldError] = []
    binders = 0
    managed: set[str] = set()
    for i, extender in enumerate(extenders):
        path = fe.index("extenders", i)
        weight = extender.get("weight", 0)
        if extender.get("prioritizeVerb") and weight <= 0:
            errs.append(
                fe.invalid(
                    fe.child(path, "weight"), weight, "must have a positive weight applied to it"
                )
            )
        if extender.get("bindVerb"):
            binders += 1
        for j, resource in enumerate(extender.get("managedResources") or []):
            name_path = fe.child(fe.index(fe.child(path, "managedResources"), j), "name")
            name = resource.get("name", "")
            messages = is_qualified_name(name)
            if messages:
                errs.extend(fe.invalid(name_path, name, msg) for msg in messages)
            elif not is_extended_resource_name(name):
                errs.append(fe.invalid(name_path, name, "is an invalid extended resource name"))
            if name in managed:
                errs.append(fe.invalid(name_path, name, "duplicate extender managed resource name"))
            managed.add(name)
    if binders > 1:
        errs.append(
            fe.invalid(
                "extenders",
                f"found {binders} extenders implementing bind",
                "only one extender can implement bind",
            )
        )
    return errs


def validate_document(
    doc: Mapping[str, Any], invalid_plugins: Sequence[str] = INVALID_V1_PLUGINS
) -> list[FieldError]:
    """Every ``ValidateKubeSchedulerConfiguration`` error of a defaulted v1 document.

    ``invalid_plugins``: names removed from the document's config version
    (:func:`scoring.config.versions.invalid_plugins`; v1 1.35's by default).
    """
    errs: list[FieldError] = []
    errs.extend(_client_connection(doc.get("clientConnection") or {}))
    election = doc.get("leaderElection") or {}
    errs.extend(_leader_election(election))
    if election.get("leaderElect") and election.get("resourceLock") != "leases":
        errs.append(
            fe.invalid(
                "leaderElection.resourceLock",
                election.get("resourceLock", ""),
                'resourceLock value must be "leases"',
            )
        )
    parallelism = doc.get("parallelism") or 0
    if parallelism <= 0:
        errs.append(
            fe.invalid("parallelism", parallelism, "should be an integer value greater than zero")
        )
    profiles: list[Mapping[str, Any]] = list(doc.get("profiles") or [])
    if not profiles:
        errs.append(fe.required("profiles"))
    else:
        existing: dict[str, int] = {}
        for i, profile in enumerate(profiles):
            path = fe.index("profiles", i)
            errs.extend(_profile(profile, path, invalid_plugins))
            name = profile.get("schedulerName") or ""
            if name in existing:
                errs.append(
                    fe.duplicate(
                        fe.child(path, "schedulerName"),
                        fe.child(fe.index("profiles", existing[name]), "schedulerName"),
                    )
                )
            existing[name] = i
        errs.extend(_common_queue_sort(profiles))
    errs.extend(_percentage("percentageOfNodesToScore", doc.get("percentageOfNodesToScore")))
    initial = doc.get("podInitialBackoffSeconds") or 0
    maximum = doc.get("podMaxBackoffSeconds") or 0
    if initial <= 0:
        errs.append(fe.invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
    if maximum < initial:
        errs.append(
            fe.invalid(
                "podMaxBackoffSeconds",
                maximum,
                "must be greater than or equal to PodInitialBackoffSeconds",
            )
        )
    errs.extend(_extenders(doc.get("extenders") or []))
    return errs
