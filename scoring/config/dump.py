"""Render a loaded configuration: the effective v1 document, or the document as it was written.

:func:`dump_configuration` renders what kube-scheduler runs (every default filled in, v1).
:func:`render_document` renders what the user or the cluster wrote, sparse, in its own
apiVersion (or converted to another one): no defaults and no field nobody set, so a scheduler
built on an older release, which decodes its configuration strictly, reads it as before.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import yaml

from scoring.config.model import SchedulerConfiguration
from scoring.config.versions import GROUP, V1BETA1, V1BETA2, VERSIONS
from scoring.errors import InputError


def dump_configuration(config: SchedulerConfiguration | Mapping[str, Any]) -> str:
    """The defaulted configuration (its ``document``) as v1 YAML.

    The output is what kube-scheduler would see after defaulting; loading it back gives the same
    configuration (same document, same profiles).
    """
    document = config.document if isinstance(config, SchedulerConfiguration) else config
    return _yaml(document)


def _yaml(document: Mapping[str, Any]) -> str:
    plain = json.loads(json.dumps(document))
    return yaml.safe_dump(plain, sort_keys=False, default_flow_style=False, allow_unicode=True)


def sparse_document(config: SchedulerConfiguration, api_version: str | None = None) -> Any:
    """The document as written (JSON-able), converted to ``api_version`` when given.

    Conversion changes only what names the version: the document's and the args'
    ``apiVersion`` in this group. It refuses (:class:`InputError`, naming the field) what the
    other version cannot hold: ``multiPoint`` in v1beta2, ``delayCacheUntilActive`` before v1,
    the deprecated v1beta2 addresses after it (unless empty or port 0, which mean nothing).
    Default plugins differ between versions; compare the effective configurations
    (:func:`scoring.config.load_configuration` on the result) before relying on a conversion.
    """
    if config.source is None:
        raise InputError("the configuration was not loaded from a document; nothing to render")
    document: dict[str, Any] = json.loads(json.dumps(dict(config.source)))
    if api_version is None or api_version == config.api_version:
        return document
    group, _, version = api_version.rpartition("/")
    if group != GROUP or version not in VERSIONS:
        raise InputError(
            f"apiVersion: cannot render as {api_version!r}; expected one of "
            + ", ".join(f"{GROUP}/{v}" for v in VERSIONS)
        )
    if V1BETA1 in (version, config.api_version.rpartition("/")[2]):
        raise InputError(
            f"apiVersion: cannot render a {config.api_version} document as {api_version}: "
            "v1beta1 names other plugins (NodeResourcesLeastAllocated, ...) and merges defaults "
            "differently; convert it by hand"
        )
    _convert(document, config.api_version, api_version)
    return document


def render_document(config: SchedulerConfiguration, api_version: str | None = None) -> str:
    """:func:`sparse_document` as YAML."""
    return _yaml(sparse_document(config, api_version))


def _convert(document: dict[str, Any], source: str, target: str) -> None:
    version = target.rpartition("/")[2]
    if version != "v1" and "delayCacheUntilActive" in document:
        raise InputError(f"delayCacheUntilActive: not a field of {target}")
    if source.endswith(V1BETA2) and version != V1BETA2:
        for name in ("healthzBindAddress", "metricsBindAddress"):
            value = document.pop(name, None)
            if value and not str(value).endswith(":0"):
                raise InputError(f"{name}: {value!r} has no equivalent in {target}")
    for i, profile in enumerate(document.get("profiles") or []):
        plugins = profile.get("plugins") or {}
        if version == V1BETA2 and "multiPoint" in plugins:
            raise InputError(f"profiles[{i}].plugins.multiPoint: not a field of {target}")
        if version == V1BETA2 and "percentageOfNodesToScore" in profile:
            raise InputError(f"profiles[{i}].percentageOfNodesToScore: not a field of {target}")
        for config in profile.get("pluginConfig") or []:
            args = config.get("args")
            if isinstance(args, dict) and str(args.get("apiVersion", "")).startswith(f"{GROUP}/"):
                args["apiVersion"] = target
    document["apiVersion"] = target


def leaves(value: Any, path: str = "") -> dict[str, Any]:
    """Every leaf of a JSON-able value by path (``a.b[0].c``); empty maps and lists are leaves."""
    if isinstance(value, Mapping) and value:
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(leaves(item, f"{path}.{key}" if path else str(key)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, item in enumerate(value):
            out.update(leaves(item, f"{path}[{i}]"))
        return out
    return {path: copy.deepcopy(value)}
