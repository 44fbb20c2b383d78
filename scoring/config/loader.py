"""Load a ``KubeSchedulerConfiguration``: parse, decode strictly, default as v1, validate all.

The pipeline is kube-scheduler's ``--config`` handling plus the startup checks:

1. parse YAML or JSON (or take an already-decoded mapping); duplicate fields are an error, as in
   Go's strict decoding;
2. check ``apiVersion: kubescheduler.config.k8s.io/{v1beta1,v1beta2,v1beta3,v1}`` (the ones the
   target reads) and ``kind: KubeSchedulerConfiguration``; the target is the one given, else
   inferred from the document (:func:`~scoring.config.targets.infer_target`);
3. decode strictly with the version's schema (:mod:`~scoring.config.schema`,
   :mod:`~scoring.config.versions`): unknown fields become field errors, values of the wrong
   JSON type an :class:`~scoring.errors.InputError`; then convert to the v1 shape;
4. decode each ``pluginConfig`` entry's args as ``<Name>Args`` when the plugin has a known args
   kind (``decodeNestedObjects``): ``apiVersion``/``kind`` are optional but must match, and the
   args' version must be one the target's release decodes (any other kind is reported as ``args
   for plugin X were not of type XArgs.kubescheduler.config.k8s.io, got ...``, also where Go
   would first say that kind is not registered); unknown plugins keep their args raw;
5. the version's defaulting (:mod:`~scoring.config.defaults` with the version's default plugins
   for the target's release);
6. ``ValidateKubeSchedulerConfiguration`` and plugin args validation
   (:mod:`~scoring.config.validation`);
7. the framework and profile-map startup checks (:mod:`~scoring.config.framework_checks`)
   against the target's plugin registry. A startup error on the same field and of the same type
   as a validation error is not repeated: kube-scheduler would have stopped at validation. Names
   an incomplete registry lacks are warnings, not errors.

All errors of steps 3-7 are reported together; :func:`load_configuration` raises
:class:`~scoring.errors.ConfigurationInvalid` with them, :func:`validate_configuration` returns
them and :func:`check_configuration` returns them with the warnings.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import yaml

from scoring import field_errors as fe
from scoring.config.catalog import (
    ARGS_API_VERSION,
    ARGS_GROUP,
    EXTENSION_POINTS,
    LEGACY,
    PluginSpec,
    lookup,
)
from scoring.config.defaults import is_typed_args, set_defaults, strip_type_meta
from scoring.config.expansion import Expansion
from scoring.config.framework_checks import framework_errors
from scoring.config.model import PluginRef, Profile, SchedulerConfiguration
from scoring.config.plugin_args import IN_TREE_ARGS
from scoring.config.registries import CONFIG_VERSION_MINORS, Registry, config_versions_of
from scoring.config.schema import KUBE_SCHEDULER_CONFIGURATION, Decoder, encode
from scoring.config.targets import Target, document_plugins, infer_target
from scoring.config.validation import validate_document
from scoring.config.versions import (
    GROUP,
    SCHEMAS,
    V1BETA1,
    VERSIONS,
    args_schema,
    default_plugins,
    invalid_plugins,
    to_v1_shape,
    to_v1beta1_args,
)
from scoring.errors import ConfigurationInvalid, FieldError, InputError
from scoring.inputs import load_json, load_yaml

CONFIG_API_VERSION = "kubescheduler.config.k8s.io/v1"
CONFIG_KIND = "KubeSchedulerConfiguration"

_REMOVED_VERSIONS = {
    "kubescheduler.config.k8s.io/v1alpha1": "1.21",
    "kubescheduler.config.k8s.io/v1alpha2": "1.21",
    "kubescheduler.config.k8s.io/v1beta1": "1.23",
    "kubescheduler.config.k8s.io/v1beta2": "1.28",
    "kubescheduler.config.k8s.io/v1beta3": "1.29",
}
_SUPPORTED = tuple(f"{GROUP}/{v}" for v in VERSIONS)


class _DuplicateField(yaml.YAMLError):
    pass


class _Loader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys and keeps timestamps as strings (like
    sigs.k8s.io/yaml, which converts YAML to JSON before decoding)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        mark = key_node.start_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}"
        try:
            duplicate = key in mapping
        except TypeError:
            raise _DuplicateField(f"a mapping key is not a string ({where})") from None
        if duplicate:
            raise _DuplicateField(f'duplicate field "{key}" ({where})')
        mapping[key] = loader.construct_object(value_node, deep=True)
    return mapping


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f'duplicate field "{k}"')
        out[k] = v
    return out


def parse_text(text: str | bytes, source_name: str = "<config>") -> Any:
    """One JSON or YAML document; :class:`InputError` when unparseable."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{source_name}: not UTF-8 text: {exc}") from None
    if text.lstrip().startswith("{"):
        try:
            return load_json(text, source=source_name, object_pairs_hook=_json_object)
        except ValueError as exc:
            if "duplicate field" in str(exc):
                raise InputError(f"{source_name}: {exc}") from None
            # YAML flow style is a superset of JSON; let YAML report the error.
    try:
        return load_yaml(text, source=source_name, loader=_Loader)
    except _DuplicateField as exc:
        raise InputError(f"{source_name}: {exc}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{source_name}: not valid JSON or YAML: {exc}") from None


def _check_type_meta(obj: Any, source_name: str, target: Target | None) -> str:
    """The document's config version (``v1beta1`` to ``v1``), when ``target`` (if
    its release is known) reads it; else an :class:`InputError` as kube-scheduler words it."""
    if not isinstance(obj, Mapping):
        found = "nothing" if obj is None else type(obj).__name__
        raise InputError(
            f"{source_name}: expected a {CONFIG_KIND} object ({CONFIG_API_VERSION}), found {found}"
        )
    api_version = obj.get("apiVersion")
    kind = obj.get("kind")
    if not kind:
        raise InputError(f"{source_name}: kind: Object 'Kind' is missing (expected {CONFIG_KIND})")
    if not api_version:
        raise InputError(
            f"{source_name}: apiVersion: Object 'apiVersion' is missing "
            f"(expected {CONFIG_API_VERSION})"
        )
    readable = _readable_versions(target)
    if api_version not in readable:
        hint = _version_hint(str(api_version), target)
        reader = f" by {target}" if target is not None and api_version in _SUPPORTED else ""
        raise InputError(
            f'{source_name}: apiVersion: no kind "{kind}" is registered for version '
            f'"{api_version}"{reader}{hint}; expected {" or ".join(readable)}'
        )
    if kind != CONFIG_KIND:
        raise InputError(
            f'{source_name}: kind: no kind "{kind}" is registered for version '
            f'"{api_version}"; expected {CONFIG_KIND}'
        )
    return str(api_version).rpartition("/")[2]


def _version_hint(api_version: str, target: Target | None) -> str:
    """Why the target cannot read ``api_version``: it arrived later, or was removed."""
    minor = target.kubernetes_minor if target is not None else None
    first, _ = CONFIG_VERSION_MINORS.get(api_version.rpartition("/")[2], (0, None))
    if minor is not None and minor < first:
        return f" ({api_version} arrived in Kubernetes 1.{first})"
    removed = _REMOVED_VERSIONS.get(api_version)
    return f" ({api_version} was removed in Kubernetes {removed})" if removed else ""


def _readable_versions(target: Target | None) -> tuple[str, ...]:
    """The full apiVersions the target's release decodes (all when unknown)."""
    minor = target.kubernetes_minor if target is not None else None
    versions = config_versions_of(minor) if minor is not None else VERSIONS
    return tuple(f"{GROUP}/{v}" for v in versions) or _SUPPORTED


def _group_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def _args_type_meta_errors(
    name: str,
    spec: PluginSpec,
    args: Mapping[str, Any],
    path: str,
    decoder: Decoder,
    versions: Sequence[str],
) -> list[FieldError] | None:
    """``decodeNestedObjects``' kind check; None when ``apiVersion``/``kind`` are not strings."""
    expected = spec.args_kind or ""
    api_version = args.get("apiVersion")
    kind = args.get("kind")
    bad_type = False
    for field_name, value in (("apiVersion", api_version), ("kind", kind)):
        if value is not None and not isinstance(value, str):
            decoder.type_errors.append(
                f"{fe.child(path, field_name)}: cannot unmarshal non-string into string"
            )
            bad_type = True
    if bad_type:
        return None
    # Without an apiVersion the args are decoded in the document's own version.
    group, version = _group_version(api_version) if api_version else (ARGS_GROUP, versions[0])
    got_kind = kind or expected
    if got_kind != expected or group != ARGS_GROUP:
        got = f"{got_kind}.{group}" if group else got_kind
        field_name = "kind" if got_kind != expected else "apiVersion"
        return [
            fe.invalid(
                fe.child(path, field_name),
                args.get(field_name),
                f"args for plugin {name} were not of type {expected}.{ARGS_GROUP}, got {got}",
            )
        ]
    if version not in versions:
        return [
            fe.invalid(
                fe.child(path, "apiVersion"),
                api_version,
                f'decoding args for plugin {name}: no kind "{expected}" is registered for '
                f'version "{api_version}"',
            )
        ]
    return []


def _unregistered_args(
    name: str, kind: str, args: Mapping[str, Any], path: str, versions: Sequence[str]
) -> FieldError:
    """Args of a kind the version does not have (``NodeResourcesBalancedAllocationArgs`` in
    v1beta1, a v1beta1-only kind in a later version)."""
    api_version = args.get("apiVersion") or f"{GROUP}/{versions[0]}"
    return fe.invalid(
        fe.child(path, "kind"),
        kind,
        f'decoding args for plugin {name}: no kind "{kind}" is registered for version '
        f'"{api_version}"',
    )


def _decode_plugin_args(
    doc: dict[str, Any], decoder: Decoder, versions: Sequence[str]
) -> list[FieldError]:
    """Decode every known plugin's args in place (``decodeNestedObjects``); ``versions`` are the
    config versions args may be written in, the document's own first."""
    errors: list[FieldError] = []
    for i, profile in enumerate(doc.get("profiles") or []):
        for j, config in enumerate(profile.get("pluginConfig") or []):
            name = config.get("name", "")
            spec = lookup(name)
            if spec is None or spec.args_kind is None:
                continue  # not a registered args kind: kept raw
            if name in LEGACY and versions[0] != V1BETA1:
                continue  # a v1beta1-only plugin: unknown to later versions, kept raw
            path = fe.child(fe.index(fe.child(fe.index("profiles", i), "pluginConfig"), j), "args")
            args: Mapping[str, Any] = config.get("args") or {}
            meta_errors = _args_type_meta_errors(name, spec, args, path, decoder, versions)
            if meta_errors is None:
                continue
            if meta_errors:
                errors.extend(meta_errors)
                continue
            in_tree = IN_TREE_ARGS.get(spec.args_kind)
            if in_tree is not None:
                version = _group_version(args["apiVersion"])[1] if args.get("apiVersion") else ""
                schema = args_schema(version or versions[0], spec.args_kind, in_tree.schema)
                if schema is None:
                    errors.append(_unregistered_args(name, spec.args_kind, args, path, versions))
                    continue
                unknown_before = len(decoder.unknown)
                decoded = decoder.decode(schema, args, path)
                errors.extend(decoder.unknown[unknown_before:])
                del decoder.unknown[unknown_before:]
                if decoded is None:
                    continue
            elif spec.has_args:
                decoded = strip_type_meta(args)
            else:
                continue  # out-of-tree args module not available: pass through unchanged
            decoded["apiVersion"] = ARGS_API_VERSION
            decoded["kind"] = spec.args_kind
            config["args"] = decoded
    return errors


def _render_typed_args(doc: dict[str, Any]) -> None:
    """In-tree args as Go marshals their struct (declaration order, zero values, omitempty)."""
    for profile in doc.get("profiles") or []:
        for config in profile.get("pluginConfig") or []:
            name = config.get("name", "")
            args = config.get("args")
            spec = lookup(name)
            in_tree = IN_TREE_ARGS.get(spec.args_kind or "") if spec is not None else None
            if in_tree is not None and is_typed_args(name, args):
                config["args"] = encode(in_tree.schema, args)


def _profile(profile: Mapping[str, Any], expansion: Expansion, minor: int) -> Profile:
    plugins = MappingProxyType(
        {
            point: tuple(PluginRef(n, expansion.weight(point, n)) for n in expansion.points[point])
            for point in EXTENSION_POINTS
        }
    )
    args: dict[str, Mapping[str, Any]] = {}
    for config in profile.get("pluginConfig") or []:
        raw = config.get("args")
        args[config.get("name", "")] = strip_type_meta(raw) if isinstance(raw, Mapping) else {}
    return Profile(
        scheduler_name=profile.get("schedulerName") or "",
        plugins=plugins,
        plugin_args=MappingProxyType(args),
        percentage_of_nodes_to_score=profile.get("percentageOfNodesToScore"),
        kubernetes_minor=minor,
    )


@dataclass(frozen=True)
class ConfigurationCheck:
    """What loading a document found: the configuration (None when invalid), every error, every
    warning (names the target's registry does not know for sure), and the target used."""

    config: SchedulerConfiguration | None
    errors: list[FieldError]
    warnings: list[FieldError]
    target: Target
    api_version: str
    registry: Registry

    @property
    def valid(self) -> bool:
        return not self.errors

    def to_dict(self) -> dict[str, Any]:
        return {
            "valid": self.valid,
            "errors": [e.to_dict() for e in self.errors],
            "warnings": [w.to_dict() for w in self.warnings],
            "target": str(self.target),
            "apiVersion": self.api_version,
            "registry": {
                "description": self.registry.description,
                "complete": self.registry.complete,
            },
        }


@dataclass
class _Processed:
    document: dict[str, Any]
    expansions: list[Expansion]
    errors: list[FieldError]
    target: Target
    api_version: str
    raw: Mapping[str, Any]
    registry: Registry


def _decode(
    raw: Mapping[str, Any], version: str, minor: int, source_name: str
) -> tuple[dict[str, Any], list[FieldError]]:
    """Steps 3-4: strict decoding in the document's version, conversion to the v1 shape, args."""
    decoder = Decoder()
    decoded = decoder.decode(SCHEMAS[version], raw, "")
    doc: dict[str, Any] = decoded if isinstance(decoded, dict) else {}
    errors = list(decoder.unknown)
    errors.extend(to_v1_shape(version, doc))
    readable = [v for v in config_versions_of(minor) if v != version]
    errors.extend(_decode_plugin_args(doc, decoder, [version, *readable]))
    if decoder.type_errors:
        raise InputError(
            f"{source_name}: cannot decode {CONFIG_KIND}: " + "; ".join(decoder.type_errors)
        )
    return doc, errors


def _process(
    source: str | bytes | Mapping[str, Any], source_name: str, target: Target | None
) -> _Processed:
    raw = source if isinstance(source, Mapping) else parse_text(source, source_name)
    version = _check_type_meta(raw, source_name, target)
    if target is None:
        target = infer_target(version, document_plugins(raw))
    minor = target.minor_for(version)
    doc, errors = _decode(raw, version, minor, source_name)
    set_defaults(doc, default_plugins(version, minor), in_place=version != V1BETA1)
    # Validate the decoded values: Go tells an empty list from an unset one (``shape: []`` is
    # set), which the rendered document, with omitempty applied, no longer shows.
    validation_errors = validate_document(doc, invalid_plugins(version, minor))
    registry = target.registry(version)
    expansions, startup_errors = framework_errors(doc, registry)
    reported = {(e.field, e.type) for e in validation_errors}
    errors.extend(validation_errors)
    errors.extend(e for e in startup_errors if (e.field, e.type) not in reported)
    if version == V1BETA1:
        to_v1beta1_args(doc)
    _render_typed_args(doc)
    doc["apiVersion"] = CONFIG_API_VERSION  # the effective document is v1-shaped
    document: dict[str, Any] = encode(KUBE_SCHEDULER_CONFIGURATION, doc)
    return _Processed(document, expansions, errors, target, f"{GROUP}/{version}", raw, registry)


def check_configuration(
    source: str | bytes | Mapping[str, Any],
    *,
    source_name: str = "<config>",
    target: Target | None = None,
) -> ConfigurationCheck:
    """Default and validate for ``target`` (inferred when None): configuration, errors, warnings.

    Unparseable input, an ``apiVersion``/``kind`` the target cannot read and values of the wrong
    JSON type raise :class:`InputError` (they cannot be decoded at all, as in kube-scheduler).
    """
    processed = _process(source, source_name, target)
    warnings = [w for expansion in processed.expansions for w in expansion.warnings]
    config = None
    minor = processed.target.minor_for(processed.api_version.rpartition("/")[2])
    if not processed.errors:
        profiles = tuple(
            _profile(profile, expansion, minor)
            for profile, expansion in zip(
                processed.document["profiles"], processed.expansions, strict=True
            )
        )
        config = SchedulerConfiguration(
            profiles=profiles,
            document=processed.document,
            api_version=processed.api_version,
            target=processed.target,
            warnings=tuple(warnings),
            source=MappingProxyType(copy.deepcopy(dict(processed.raw))),
        )
    return ConfigurationCheck(
        config,
        processed.errors,
        warnings,
        processed.target,
        processed.api_version,
        processed.registry,
    )


def validate_configuration(
    source: str | bytes | Mapping[str, Any],
    *,
    source_name: str = "<config>",
    target: Target | None = None,
) -> tuple[SchedulerConfiguration | None, list[FieldError]]:
    """Default and validate; the configuration (None when invalid) and every error.

    Warnings are on the configuration (:attr:`SchedulerConfiguration.warnings`); see
    :func:`check_configuration` for them also when the document is invalid.
    """
    check = check_configuration(source, source_name=source_name, target=target)
    return check.config, check.errors


def load_configuration(
    source: str | bytes | Mapping[str, Any],
    *,
    source_name: str = "<config>",
    target: Target | None = None,
) -> SchedulerConfiguration:
    """Parse, default and validate a ``KubeSchedulerConfiguration`` (YAML/JSON text or mapping).

    Raises :class:`~scoring.errors.ConfigurationInvalid` with every error, or
    :class:`~scoring.errors.InputError` when the input cannot be decoded.
    """
    config, errors = validate_configuration(source, source_name=source_name, target=target)
    if config is None:
        raise ConfigurationInvalid(errors)
    return config


def default_configuration() -> SchedulerConfiguration:
    """What kube-scheduler 1.35 runs with no ``--config``: one ``default-scheduler`` profile."""
    return load_configuration({"apiVersion": CONFIG_API_VERSION, "kind": CONFIG_KIND})
