"""What the profile editor shows beside its plugin boxes: the plugins the cluster's scheduler
target registers per extension point, checks of the names typed against that registry, and
the effective plugins (defaults and multiPoint expanded) the engine computes for the profile.

The target is the cluster's (set or detected), else the one the engine infers from the whole
document; the registry is that target's (:mod:`scoring.config.registries`). Plugins the engine
does not model (its catalog does not know them) are marked: evaluations skip them.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from policy.policies import documents
from policy.policies.models import SchedulerConfiguration
from scoring import (
    EXTENSION_POINTS,
    MULTI_POINT,
    PLUGIN_TYPE_NAMES,
    ConfigurationCheck,
    InputError,
    Registry,
    check_configuration,
)
from scoring import PLUGIN_CATALOG as CATALOG

WHICH = ("enabled", "disabled")


@dataclass(frozen=True)
class Registered:
    name: str
    modelled: bool


@dataclass(frozen=True)
class EffectivePlugin:
    name: str
    weight: int | None  # at score only
    listed_here: bool  # named in this point's own enabled list (else defaults or multiPoint)
    modelled: bool


@dataclass
class PluginHelp:
    """Everything the editor shows about plugins for one profile."""

    target: str
    registry: str
    complete: bool
    registered: dict[str, list[Registered]]  # extension point (and multiPoint) -> plugins
    notes: dict[str, list[str]] = field(default_factory=dict)  # box -> messages
    problems: dict[str, list[str]] = field(default_factory=dict)  # box -> errors
    effective: list[tuple[str, list[EffectivePlugin]]] | None = None
    effective_note: str = ""


def box_name(point: str, which: str) -> str:
    return f"plugins_{point}_{which}"


def box_of_path(path: str) -> str | None:
    """The box an error path of a profile is about: ``plugins.filter.enabled[0]`` ->
    ``plugins_filter_enabled``; ``plugins.score`` -> its enabled box; None for others."""
    parts = path.replace("[", ".").split(".")
    if len(parts) < 2 or parts[0] != "plugins":
        return None
    point = parts[1]
    if point != MULTI_POINT and point not in EXTENSION_POINTS:
        return None
    which = parts[2] if len(parts) > 2 and parts[2] in WHICH else "enabled"
    return box_name(point, which)


def _profile_entry(profile_id: int | None, values: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": profile_id,
        "position": values.get("position") or 0,
        "scheduler_name": values.get("scheduler_name") or "",
        "percentage_of_nodes_to_score": values.get("percentage_of_nodes_to_score"),
        "plugins": copy.deepcopy(values.get("plugins") or {}),
        "plugin_config": copy.deepcopy(values.get("plugin_config") or []),
        "loadaware_args": None,
    }


def _tree_with(
    configuration: SchedulerConfiguration, profile_id: int | None, values: Mapping[str, Any]
) -> dict[str, Any]:
    tree = configuration.tree()
    profiles = tree.get("profiles") or []
    for entry in profiles:
        if profile_id is not None and entry.get("id") == profile_id:
            args = entry.get("loadaware_args")
            entry.update(_profile_entry(profile_id, values))
            entry["loadaware_args"] = args
            break
    else:
        profiles.append(_profile_entry(None, values))
    tree["profiles"] = profiles
    return tree


def _check(
    configuration: SchedulerConfiguration, tree: Mapping[str, Any]
) -> ConfigurationCheck | None:
    target = configuration.cluster.scheduler_target()
    try:
        written = documents.for_target(documents.build_document(tree).written, target)
        return check_configuration(written, source_name="document", target=target)
    except InputError:
        return None


def _registered(registry: Registry) -> dict[str, list[Registered]]:
    plugins = sorted(registry.plugins.values(), key=lambda p: p.name)
    out = {MULTI_POINT: [Registered(p.name, p.name in CATALOG) for p in plugins]}
    for point in EXTENSION_POINTS:
        out[point] = [Registered(p.name, p.name in CATALOG) for p in plugins if p.implements(point)]
    return out


def _names(plugins: Mapping[str, Any], point: str, which: str) -> list[str]:
    entries = (plugins.get(point) or {}).get(which) or []
    return [str(e.get("name", "")) for e in entries if isinstance(e, Mapping)]


def _check_names(
    help_: PluginHelp, registry: Registry, target: str, plugins: Mapping[str, Any]
) -> None:
    """Names typed that the registry lacks, or lists at a point the plugin does not implement:
    an error when the registry is complete, else a note (schedboard cannot tell)."""
    for point in (MULTI_POINT, *EXTENSION_POINTS):
        for which in WHICH:
            for name in _names(plugins, point, which):
                if not name or name == "*":
                    continue
                plugin = registry.lookup(name)
                message = ""
                if plugin is None:
                    message = f"{name}: {target} registers no plugin of that name"
                elif point != MULTI_POINT and which == "enabled" and not plugin.implements(point):
                    message = (
                        f"{name}: registered by {target}, but it is not a "
                        f"{PLUGIN_TYPE_NAMES[point]} (it extends "
                        f"{', '.join(plugin.extension_points) or 'no point'})"
                    )
                if not message:
                    continue
                sure = registry.complete and (plugin is None or plugin.points_complete)
                hint = _did_you_mean(name, registry) if plugin is None else ""
                if which == "disabled":
                    help_.notes.setdefault(box_name(point, which), []).append(
                        f"{message}; disabling it changes nothing.{hint}"
                    )
                elif sure:
                    help_.problems.setdefault(box_name(point, which), []).append(
                        f"{message} ({registry.description}).{hint}"
                    )
                else:
                    help_.notes.setdefault(box_name(point, which), []).append(
                        f"{message} that schedboard knows of ({registry.description}): "
                        f"kept, but not checked.{hint}"
                    )


def _did_you_mean(name: str, registry: Registry) -> str:
    """The hint " Did you mean NodeResourcesFit?" for a name close to one the registry holds
    (another case, a small typo: a scheduler matches names exactly), else ""."""
    names = {known.lower(): known for known in registry.plugins}
    close = difflib.get_close_matches(name.lower(), list(names), n=1, cutoff=0.8)
    return f" Did you mean {names[close[0]]}?" if close else ""


def _effective(
    check: ConfigurationCheck, scheduler_name: str, plugins: Mapping[str, Any]
) -> list[tuple[str, list[EffectivePlugin]]] | None:
    if check.config is None:
        return None
    profile = check.config.profile(scheduler_name or "default-scheduler")
    if profile is None:
        return None
    rows = []
    for point in EXTENSION_POINTS:
        listed = set(_names(plugins, point, "enabled"))
        rows.append(
            (
                point,
                [
                    EffectivePlugin(
                        ref.name,
                        ref.weight if point == "score" else None,
                        ref.name in listed,
                        ref.name in CATALOG,
                    )
                    for ref in profile.plugins.get(point, ())
                ],
            )
        )
    return rows


def plugin_help(
    configuration: SchedulerConfiguration,
    profile_id: int | None,
    values: Mapping[str, Any] | None,
) -> PluginHelp | None:
    """The plugin help for a profile of ``configuration`` with ``values`` (the form's, or
    None for the stored profile); None when the document cannot be decoded at all."""
    stored = _tree_with_stored(configuration, profile_id)
    if values is None:
        values = stored
    tree = _tree_with(configuration, profile_id, values)
    check = _check(configuration, tree)
    note = ""
    effective = None
    if check is not None:
        effective = _effective(
            check, values.get("scheduler_name") or "", values.get("plugins") or {}
        )
    if effective is None and values is not stored:
        saved = _check(configuration, _tree_with(configuration, profile_id, stored))
        if saved is not None and profile_id is not None:
            effective = _effective(
                saved, stored.get("scheduler_name") or "", stored.get("plugins") or {}
            )
            note = (
                "These are the plugins of the saved profile: the configuration with your input "
                "is not valid yet (see the errors)."
            )
        check = check or saved
    if check is None:
        return None
    target = str(check.target)
    help_ = PluginHelp(
        target=target,
        registry=check.registry.description,
        complete=check.registry.complete,
        registered=_registered(check.registry),
        effective=effective,
        effective_note=note,
    )
    if effective is None and not note:
        help_.effective_note = "Not known until the configuration is valid (see the errors)."
    _check_names(help_, check.registry, target, values.get("plugins") or {})
    return help_


NEW_PROFILE = "new-profile"  # the name a new profile is checked under until it has one


def _tree_with_stored(configuration: SchedulerConfiguration, profile_id: int | None) -> Any:
    if profile_id is None:  # a new profile: the default plugins, beside the others
        others = configuration.profiles.exists()
        return {"plugins": {}, "scheduler_name": NEW_PROFILE if others else "", "plugin_config": []}
    profile = configuration.profiles.filter(pk=profile_id).first()
    if profile is None:
        return {"plugins": {}, "scheduler_name": "", "plugin_config": []}
    return {
        "position": profile.position,
        "scheduler_name": profile.scheduler_name,
        "percentage_of_nodes_to_score": profile.percentage_of_nodes_to_score,
        "plugins": profile.plugins or {},
        "plugin_config": profile.plugin_config or [],
    }
