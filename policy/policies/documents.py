"""The adapter between scheduler-configuration rows and the v1 ``KubeSchedulerConfiguration``.

Three directions, all on plain data (the *tree*: a configuration's snapshot with its profiles
and their LoadAware args, as :meth:`SchedulerConfiguration.tree` returns it and history stores it):

- :func:`build_document` renders a tree as the v1 document (not defaulted: unset stays unset,
  so kube-scheduler's defaults apply), and remembers where each part of the document came from,
  so :func:`locate` can map an engine :class:`~scoring.errors.FieldError` path such as
  ``profiles[1].pluginConfig[0].args.usageThresholds`` back to the API object and field
  (``profiles[1].loadaware_args.usage_thresholds``);
- :func:`tree_from_document` decomposes an imported document into a tree (the inverse);
- :func:`written_document` renders what is written to the cluster: the document as the user or
  the cluster wrote it (``source_document``, in its own apiVersion, sparse, every field kept)
  with only the edits made since applied (:func:`merge_edits`); without one, the built document;
- :func:`validate_tree` runs the engine's validation (``validate_configuration``) on the
  written document.

The engine owns every rule; nothing here re-checks a value.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoring import (
    CONFIG_API_VERSION,
    CONFIG_KIND,
    INVALID,
    KUBE_SCHEDULER_CONFIGURATION,
    LOADAWARE,
    TYPE_INVALID,
    FieldError,
    InputError,
    Target,
    config_versions_of,
    document_plugins,
    infer_target,
    sparse_document,
    validate_configuration,
)
from scoring import CONFIG_GROUP as GROUP
from scoring import LOADAWARE_ARGS_KIND as LOADAWARE_KIND
from scoring import SchedulerConfiguration as EngineConfiguration
from scoring import SchemaDecoder as Decoder
from scoring import parse_configuration_text as parse_text

ARGS_API_VERSION = "kubescheduler.config.k8s.io/v1"

# Configuration model field -> v1 JSON name, in v1 declaration order.
CONFIGURATION_FIELDS: dict[str, str] = {
    "parallelism": "parallelism",
    "leader_election": "leaderElection",
    "client_connection": "clientConnection",
    "enable_profiling": "enableProfiling",
    "enable_contention_profiling": "enableContentionProfiling",
    "percentage_of_nodes_to_score": "percentageOfNodesToScore",
    "pod_initial_backoff_seconds": "podInitialBackoffSeconds",
    "pod_max_backoff_seconds": "podMaxBackoffSeconds",
    "extenders": "extenders",
    "delay_cache_until_active": "delayCacheUntilActive",
}
PROFILE_FIELDS: dict[str, str] = {
    "scheduler_name": "schedulerName",
    "percentage_of_nodes_to_score": "percentageOfNodesToScore",
    "plugins": "plugins",
    "plugin_config": "pluginConfig",
}
# LoadAwareSchedulingArgs: model field -> v1 JSON name (``aggregated.*`` nested).
ARGS_FIELDS: dict[str, str] = {
    "node_metric_expiration_seconds": "nodeMetricExpirationSeconds",
    "filter_expired_node_metrics": "filterExpiredNodeMetrics",
    "enable_schedule_when_node_metrics_expired": "enableScheduleWhenNodeMetricsExpired",
    "resource_weights": "resourceWeights",
    "dominant_resource_weight": "dominantResourceWeight",
    "usage_thresholds": "usageThresholds",
    "prod_usage_thresholds": "prodUsageThresholds",
    "prod_usage_include_sys": "prodUsageIncludeSys",
    "score_according_prod_usage": "scoreAccordingProdUsage",
    "estimator": "estimator",
    "estimated_scaling_factors": "estimatedScalingFactors",
    "estimated_seconds_after_pod_scheduled": "estimatedSecondsAfterPodScheduled",
    "estimated_seconds_after_initialized": "estimatedSecondsAfterInitialized",
    "allow_customize_estimation": "allowCustomizeEstimation",
    "supported_resources": "supportedResources",
}
AGGREGATED_FIELDS: dict[str, str] = {
    "aggregated_usage_thresholds": "usageThresholds",
    "aggregated_usage_aggregation_type": "usageAggregationType",
    "aggregated_usage_aggregated_duration": "usageAggregatedDuration",
    "aggregated_score_aggregation_type": "scoreAggregationType",
    "aggregated_score_aggregated_duration": "scoreAggregatedDuration",
}
_TEXT_ARGS_FIELDS = frozenset(
    {"estimator", *(name for name in AGGREGATED_FIELDS if not name.endswith("_thresholds"))}
)
# Upstream reports nodeMetricExpirationSeconds errors under this (misspelt) path.
_ARGS_PATH_ALIASES = {"nodeMetricExpiredSeconds": "node_metric_expiration_seconds"}

CONFIGURATION = "configuration"
PROFILE = "profile"
ARGS = "loadaware_args"


# -- rendering ----------------------------------------------------------------------------------


def _unset(value: Any) -> bool:
    return value is None or value == "" or value == {} or value == []


def args_to_v1(args: Mapping[str, Any]) -> dict[str, Any]:
    """LoadAware args model fields (a snapshot) -> v1 args JSON: only what is set."""
    v1: dict[str, Any] = {}
    for name, v1_name in ARGS_FIELDS.items():
        value = args.get(name)
        if value is not None and value != "":
            v1[v1_name] = copy.deepcopy(value)
    aggregated = {
        v1_name: copy.deepcopy(args[name])
        for name, v1_name in AGGREGATED_FIELDS.items()
        if args.get(name) is not None and args.get(name) != ""
    }
    if aggregated:
        v1["aggregated"] = aggregated
    return v1


def args_from_v1(v1: Mapping[str, Any]) -> dict[str, Any]:
    """v1 args JSON -> LoadAware args model fields (unset: None, or "" for text fields)."""
    values: dict[str, Any] = {}
    aggregated = v1.get("aggregated") or {}
    sources = [(ARGS_FIELDS, v1), (AGGREGATED_FIELDS, aggregated)]
    for names, source in sources:
        for name, v1_name in names.items():
            value = source.get(v1_name)
            if value is None and name in _TEXT_ARGS_FIELDS:
                value = ""
            values[name] = _integral(value)
    return values


def _integral(value: Any) -> Any:
    """YAML ``65.0`` is JSON 65 to Go's decoder: keep integers as integers."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Origin:
    """Where a part of the document came from: the API object and how its fields are named."""

    doc_prefix: str
    kind: str  # CONFIGURATION, PROFILE or ARGS
    object_id: int | None
    api_prefix: str
    # profile only: document pluginConfig index -> plugin_config index (None: the args entry)
    plugin_config_index: tuple[int | None, ...] = ()


@dataclass
class BuiltDocument:
    """``document``: the tree as a v1 document; ``written``: what is written to the cluster
    (:func:`written_document`; the same paths, so :func:`locate` maps its errors too)."""

    document: dict[str, Any]
    origins: list[Origin] = field(default_factory=list)
    written: dict[str, Any] = field(default_factory=dict)


def build_document(tree: Mapping[str, Any]) -> BuiltDocument:
    """The v1 document of a configuration tree (see the module docstring)."""
    built = _build(tree)
    built.written = written_document(tree)
    return built


def _build(tree: Mapping[str, Any], args_api_version: str = ARGS_API_VERSION) -> BuiltDocument:
    doc: dict[str, Any] = {"apiVersion": CONFIG_API_VERSION, "kind": CONFIG_KIND}
    for name, v1_name in CONFIGURATION_FIELDS.items():
        value = tree.get(name)
        # delayCacheUntilActive is stored as a plain boolean: false is its default, unset.
        if not _unset(value) and not (name == "delay_cache_until_active" and value is False):
            doc[v1_name] = copy.deepcopy(value)
    origins = [Origin("", CONFIGURATION, tree.get("id"), "")]
    profiles = []
    for i, profile in enumerate(_ordered(tree.get("profiles") or [])):
        doc_prefix = f"profiles[{i}]"
        api_prefix = f"profiles[{i}]"
        entry: dict[str, Any] = {}
        if profile.get("scheduler_name"):
            entry["schedulerName"] = profile["scheduler_name"]
        if profile.get("percentage_of_nodes_to_score") is not None:
            entry["percentageOfNodesToScore"] = profile["percentage_of_nodes_to_score"]
        if profile.get("plugins"):
            entry["plugins"] = copy.deepcopy(profile["plugins"])
        configs: list[dict[str, Any]] = [
            copy.deepcopy(c) for c in profile.get("plugin_config") or []
        ]
        index_map: list[int | None] = list(range(len(configs)))
        args = profile.get("loadaware_args")
        if args is not None:
            position = args.get("plugin_config_index")
            at = len(configs) if position is None else min(int(position), len(configs))
            v1_args = {"apiVersion": args_api_version, "kind": LOADAWARE_KIND, **args_to_v1(args)}
            configs.insert(at, {"name": LOADAWARE, "args": v1_args})
            index_map.insert(at, None)
            origins.append(
                Origin(
                    f"{doc_prefix}.pluginConfig[{at}].args",
                    ARGS,
                    args.get("id"),
                    f"{api_prefix}.loadaware_args",
                )
            )
        if configs:
            entry["pluginConfig"] = configs
        origins.append(Origin(doc_prefix, PROFILE, profile.get("id"), api_prefix, tuple(index_map)))
        profiles.append(entry)
    if profiles:
        doc["profiles"] = profiles
    return BuiltDocument(doc, origins)


def _ordered(profiles: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(profiles, key=lambda p: (p.get("position") or 0, p.get("id") or 0))


# -- the document as written --------------------------------------------------------------------


def source_api_version(source: Mapping[str, Any] | None) -> str:
    """The apiVersion a stored configuration is written in (v1 when it has no source)."""
    if source and isinstance(source.get("apiVersion"), str):
        return str(source["apiVersion"])
    return CONFIG_API_VERSION


def written_document(tree: Mapping[str, Any]) -> dict[str, Any]:
    """What is written to the cluster for a tree.

    With a ``source_document`` (imported, or adopted from the cluster): that document with the
    edits that turned the source's own tree into this one (:func:`merge_edits`), so every field
    nobody changed here stays exactly as written (its apiVersion, args schedboard does not
    model, fields it does not store, values spelt ``65.0``). Without one: the built document.
    Either way no default is filled in.
    """
    source = tree.get("source_document")
    if not source:
        return _build(tree).document
    args_version = _args_version(source_api_version(source))
    base = _build(tree_from_document(source), args_version).document
    current = _build(tree, args_version).document
    merged: dict[str, Any] = merge_edits(source, base, current)
    return merged


def _args_version(api_version: str) -> str:
    """New args are written in the document's own version (the release reads that one)."""
    return api_version if api_version.startswith(f"{GROUP}/") else ARGS_API_VERSION


def _list_key(item: Any) -> tuple[str, str] | None:
    """How an entry of a list is recognised across edits: plugins and pluginConfig entries by
    ``name``, profiles by ``schedulerName``."""
    if not isinstance(item, Mapping):
        return None
    if isinstance(item.get("name"), str):
        return ("name", item["name"])
    if "plugins" in item or "pluginConfig" in item or "schedulerName" in item:
        return ("schedulerName", str(item.get("schedulerName") or "default-scheduler"))
    return None


def _keys(items: Sequence[Any]) -> list[tuple[str, str]] | None:
    keys = [_list_key(item) for item in items]
    if any(key is None for key in keys) or len(set(keys)) != len(keys):
        return None
    return keys  # type: ignore[return-value]


def merge_edits(source: Any, base: Any, current: Any) -> Any:
    """``source`` with the edits that turned ``base`` into ``current``.

    ``base`` is ``source`` as schedboard models it, ``current`` the same after edits: a part
    where they are equal is ``source``'s as written; a key edited, added or removed is
    ``current``'s; lists of named entries are matched by name (an entry added is
    ``current``'s, one removed goes), other lists by position when their lengths agree.
    """
    if base == current:
        return copy.deepcopy(source)
    if isinstance(source, Mapping) and isinstance(base, Mapping) and isinstance(current, Mapping):
        out = copy.deepcopy(dict(source))
        for key in [*base, *(k for k in current if k not in base)]:
            if key not in current:
                out.pop(key, None)
            elif key not in base or key not in source:
                out[key] = copy.deepcopy(current[key])
            else:
                out[key] = merge_edits(source[key], base[key], current[key])
        return out
    if isinstance(source, list) and isinstance(base, list) and isinstance(current, list):
        source_keys, base_keys, current_keys = _keys(source), _keys(base), _keys(current)
        if source_keys is not None and base_keys is not None and current_keys is not None:
            written = dict(zip(source_keys, source, strict=True))
            modelled = dict(zip(base_keys, base, strict=True))
            return [
                merge_edits(written[key], modelled[key], item)
                if key in written and key in modelled
                else copy.deepcopy(item)
                for key, item in zip(current_keys, current, strict=True)
            ]
        if len(source) == len(base) == len(current):
            return [merge_edits(*parts) for parts in zip(source, base, current, strict=True)]
    return copy.deepcopy(current)


def as_v1(document: Mapping[str, Any]) -> dict[str, Any]:
    """A sparse document of any config version in the v1 shape the tree stores: the v1
    apiVersion (its args' too), without the v1beta2 addresses (validated before)."""
    doc = copy.deepcopy(dict(document))
    api_version = str(doc.get("apiVersion") or "")
    if api_version == CONFIG_API_VERSION or not api_version.startswith(f"{GROUP}/"):
        return doc
    doc["apiVersion"] = CONFIG_API_VERSION
    doc.pop("healthzBindAddress", None)
    doc.pop("metricsBindAddress", None)
    for profile in doc.get("profiles") or []:
        for config in (profile.get("pluginConfig") if isinstance(profile, dict) else None) or []:
            args = config.get("args") if isinstance(config, dict) else None
            if isinstance(args, dict) and str(args.get("apiVersion", "")).startswith(f"{GROUP}/"):
                args["apiVersion"] = ARGS_API_VERSION
    return doc


# -- importing ----------------------------------------------------------------------------------


def tree_from_document(written: Mapping[str, Any]) -> dict[str, Any]:
    """Configuration fields and profiles (with LoadAware args) of a document of any config
    version, which is kept as ``source_document``.

    ``written`` must have passed :func:`validate_source` (it decodes strictly).
    """
    document = as_v1(written)
    decoder = Decoder()
    decoded = decoder.decode(KUBE_SCHEDULER_CONFIGURATION, document, "") or {}
    tree: dict[str, Any] = {
        name: decoded.get(v1_name) for name, v1_name in CONFIGURATION_FIELDS.items()
    }
    tree["leader_election"] = tree["leader_election"] or {}
    tree["client_connection"] = tree["client_connection"] or {}
    tree["extenders"] = tree["extenders"] or []
    tree["delay_cache_until_active"] = bool(tree["delay_cache_until_active"])
    profiles = []
    # Plugin args are kept as written (the decoder leaves RawExtensions alone).
    raw_profiles = document.get("profiles") or []
    for position, (profile, raw) in enumerate(
        zip(decoded.get("profiles") or [], raw_profiles, strict=True)
    ):
        configs = []
        loadaware: dict[str, Any] | None = None
        for index, (config, raw_config) in enumerate(
            zip(profile.get("pluginConfig") or [], raw.get("pluginConfig") or [], strict=True)
        ):
            if config.get("name") == LOADAWARE and loadaware is None:
                args = dict(raw_config.get("args") or {})
                args.pop("apiVersion", None)
                args.pop("kind", None)
                loadaware = {**args_from_v1(args), "plugin_config_index": index}
            else:
                entry = {"name": config.get("name", "")}
                if raw_config.get("args") is not None:
                    entry["args"] = copy.deepcopy(raw_config["args"])
                configs.append(entry)
        profiles.append(
            {
                "position": position,
                "scheduler_name": profile.get("schedulerName") or "",
                "percentage_of_nodes_to_score": profile.get("percentageOfNodesToScore"),
                "plugins": profile.get("plugins") or {},
                "plugin_config": configs,
                "loadaware_args": loadaware,
            }
        )
    tree["profiles"] = profiles
    tree["source_document"] = copy.deepcopy(dict(written))
    return tree


def detect_target(text: str) -> str:
    """``flavor@version`` the engine infers from a scheduler ConfigMap's document (its
    apiVersion and the plugins it enables); empty when it is no such document."""
    try:
        document = parse_source(text)
    except InputError:
        return ""
    if not isinstance(document, Mapping) or document.get("kind") != CONFIG_KIND:
        return ""
    group, _, version = str(document.get("apiVersion") or "").rpartition("/")
    if group != GROUP:
        return ""
    return str(infer_target(version, document_plugins(document)))


def parse_source(text: str) -> Any:
    """A YAML or JSON document; :class:`InputError` when unreadable."""
    return parse_text(text, "document")


# -- validation ---------------------------------------------------------------------------------


_TYPE_ERROR = re.compile(r"^(?P<path>[^:\s]+): (?P<detail>.+)$")
_DECODE_PREFIX = re.compile(r"^[^:]*: cannot decode KubeSchedulerConfiguration: ")


def input_errors(exc: InputError) -> list[FieldError]:
    """Field errors from an undecodable document (values of the wrong JSON type)."""
    message = str(exc)
    body = _DECODE_PREFIX.sub("", message, count=1)
    if body == message:  # not a decoding error: unreadable, wrong apiVersion/kind...
        detail = re.sub(r"^(document|<config>): ", "", message)
        return [FieldError("", INVALID, detail)]
    errors = []
    for part in body.split("; "):
        match = _TYPE_ERROR.match(part)
        if match and match["path"] != "<root>":
            errors.append(FieldError(match["path"], TYPE_INVALID, match["detail"]))
        else:
            errors.append(FieldError("", TYPE_INVALID, part))
    return errors


def validate_source(
    source: Mapping[str, Any] | str, target: Target | None = None
) -> list[FieldError]:
    """Every error the engine finds in a document (YAML/JSON text or mapping) of any config
    version, for ``target`` (inferred from the document when None)."""
    try:
        _, errors = validate_configuration(source, source_name="document", target=target)
    except InputError as exc:
        return input_errors(exc)
    return errors


def validate_import(source: str, target: Target | None) -> list[FieldError]:
    """Errors of a document to import, as it would be written for ``target``."""
    try:
        document = parse_source(source)
        if isinstance(document, Mapping):
            return validate_source(for_target(document, target), target)
    except InputError as exc:
        return input_errors(exc)
    return validate_source(source, target)


def validate_tree(
    tree: Mapping[str, Any], target: Target | None = None
) -> tuple[BuiltDocument, list[FieldError]]:
    """The tree's built document and the engine's errors in what would be written (in an
    apiVersion ``target`` reads: :func:`for_target`)."""
    built = build_document(tree)
    try:
        built.written = for_target(built.written, target)
    except InputError as exc:
        return built, input_errors(exc)
    return built, validate_source(built.written, target)


def for_target(document: Mapping[str, Any], target: Target | None) -> dict[str, Any]:
    """The document in its own apiVersion when the target's release reads it, else converted
    (by the engine, :func:`scoring.config.sparse_document`) to the newest version it reads;
    :class:`InputError` naming the field the other version cannot hold."""
    current = str(document.get("apiVersion") or "")
    minor = target.kubernetes_minor if target is not None else None
    readable = config_versions_of(minor) if minor is not None else ()
    group, _, version = current.rpartition("/")
    if not readable or group != GROUP or version in readable:
        return dict(document)
    loaded = EngineConfiguration((), {}, api_version=current, source=document)
    converted: dict[str, Any] = sparse_document(loaded, f"{GROUP}/{readable[-1]}")
    return converted


# -- error locations ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Location:
    """Where an engine error belongs: the object (kind, id), its field path, the tree path."""

    kind: str
    object_id: int | None
    field: str
    tree_path: str


_SEGMENT = re.compile(r"^(?P<name>[A-Za-z]+)(?P<rest>.*)$")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _split(path: str) -> tuple[str, str]:
    """``a.b[1].c`` -> (``a``, ``.b[1].c``... minus the first name)."""
    match = _SEGMENT.match(path)
    if not match:
        return "", path
    return match["name"], match["rest"]


def _is_under(path: str, prefix: str) -> bool:
    if not prefix:
        return True
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def _join(prefix: str, rest: str) -> str:
    if not rest:
        return prefix
    if not prefix:
        return rest.lstrip(".")
    return prefix + (rest if rest.startswith("[") else "." + rest.lstrip("."))


def args_field(path: str) -> str:
    """A v1 ``LoadAwareSchedulingArgs`` error path (relative to the args) as model fields:
    ``aggregated.usageAggregationType`` -> ``aggregated_usage_aggregation_type``."""
    name, tail = _split(path)
    if not name:
        return ""
    if name == "aggregated":
        sub, sub_tail = _split(tail.lstrip("."))
        field_name = next((k for k, v in AGGREGATED_FIELDS.items() if v == sub), "")
        return _join(field_name, sub_tail) if field_name else "aggregated"
    field_name = _ARGS_PATH_ALIASES.get(name) or next(
        (k for k, v in ARGS_FIELDS.items() if v == name), _snake(name)
    )
    return _join(field_name, tail)


def locate(built: BuiltDocument, error: FieldError) -> Location:
    """Map an engine error path onto the API object and field it is about."""
    path = error.field
    origin = max(
        (o for o in built.origins if _is_under(path, o.doc_prefix)),
        key=lambda o: len(o.doc_prefix),
    )
    rest = path[len(origin.doc_prefix) :].lstrip(".")
    kind, object_id = origin.kind, origin.object_id
    api_prefix = origin.api_prefix
    name, tail = _split(rest)
    if origin.kind == ARGS:
        local = args_field(rest)
    elif origin.kind == PROFILE and name == "pluginConfig":
        match = re.match(r"^\[(\d+)\](.*)$", tail)
        local = "plugin_config"
        if match:
            index = int(match[1])
            mapped = (
                origin.plugin_config_index[index]
                if index < len(origin.plugin_config_index)
                else index
            )
            if mapped is None:  # the LoadAwareScheduling entry itself
                args_origin = next(
                    o
                    for o in built.origins
                    if o.kind == ARGS and o.api_prefix == f"{api_prefix}.loadaware_args"
                )
                return Location(
                    ARGS,
                    args_origin.object_id,
                    "",
                    f"{api_prefix}.loadaware_args",
                )
            local = _join(f"plugin_config[{mapped}]", match[2])
        else:
            local = _join(local, tail)
    elif name:
        fields = CONFIGURATION_FIELDS if origin.kind == CONFIGURATION else PROFILE_FIELDS
        local_name = next((k for k, v in fields.items() if v == name), _snake(name))
        local = _join(local_name, tail)
    else:
        local = ""
    return Location(kind, object_id, local, _join(api_prefix, local) if api_prefix else local)
