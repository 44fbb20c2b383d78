"""Startup errors: what ``NewFramework`` and ``profile.NewMap`` reject after validation passed.

kube-scheduler builds one framework per profile (``pkg/scheduler/framework/runtime/framework.go``)
and then the profile map (``pkg/scheduler/profile/profile.go``). Their errors are plain Go
errors; here each becomes a :class:`~scoring.errors.FieldError` with the upstream message as its
detail, at the field that causes it:

===========================================================  ====================================
message                                                      field, type
===========================================================  ====================================
``repeated config for plugin X``                             ``profiles[i].pluginConfig[j]``,
                                                             Duplicate
``FilterPlugin "X" does not exist``, ``plugin "X" does not   ``profiles[i].plugins.<point>.
extend FilterPlugin plugin``                                 enabled[k]``, Invalid
``plugin "X" already registered as "FilterPlugin"``          same, Duplicate
``only one queue sort plugin required ..., but got N``       ``profiles[i].plugins.queueSort``,
                                                             Required (0) / Invalid (2+)
``at least one bind plugin is needed ...``                   ``profiles[i].plugins.bind``,
                                                             Required
``total score of Score plugins could overflow``              ``profiles[i].plugins.score``,
                                                             Invalid
``scheduler name is needed``                                 ``profiles[i].schedulerName``,
                                                             Required
``duplicate profile with scheduler name "X"``                ``profiles[i].schedulerName``,
                                                             Duplicate
``different queue sort plugins for profile "X": "B",         ``profiles[i].plugins.queueSort``,
first: "A"``                                                 Invalid
``different queue sort plugin args for profile "X"``         ``profiles[i].pluginConfig[j].args``,
                                                             Invalid
===========================================================  ====================================

``initializing plugin "NodeResourcesFit": ...`` (args validation in the plugin constructor) is
reported by :mod:`scoring.config.validation`, with the other args errors.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from scoring import field_errors as fe
from scoring.config.defaults import strip_type_meta
from scoring.config.expansion import Expansion, expand_profile
from scoring.config.registries import Registry
from scoring.errors import DUPLICATE, INVALID, REQUIRED, FieldError


def repeated_plugin_config(profile: Mapping[str, Any], path: str) -> list[FieldError]:
    """``repeated config for plugin X`` for every repeated ``pluginConfig`` name."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for j, config in enumerate(profile.get("pluginConfig") or []):
        name = config.get("name", "")
        if name in seen:
            errors.append(
                FieldError(
                    fe.index(fe.child(path, "pluginConfig"), j),
                    DUPLICATE,
                    f"repeated config for plugin {name}",
                    name,
                )
            )
        seen.add(name)
    return errors


def check_profile(
    profile: Mapping[str, Any], path: str, registry: Registry | None = None
) -> Expansion:
    """NewFramework for one defaulted profile: its expansion, with every init error."""
    expansion = expand_profile(profile.get("plugins") or {}, path, registry)
    errors = repeated_plugin_config(profile, path) + expansion.errors
    name = json.dumps(profile.get("schedulerName") or "")
    queue_sort = expansion.points["queueSort"]
    if len(queue_sort) != 1:
        errors.append(
            FieldError(
                fe.child(path, "plugins", "queueSort"),
                REQUIRED if not queue_sort else INVALID,
                "only one queue sort plugin required for profile with scheduler name "
                f"{name}, but got {len(queue_sort)}",
                list(queue_sort),
            )
        )
    if not expansion.points["bind"]:
        errors.append(
            fe.required(
                fe.child(path, "plugins", "bind"),
                f"at least one bind plugin is needed for profile with scheduler name {name}",
            )
        )
    expansion.errors = errors
    return expansion


def _queue_sort_args(profile: Mapping[str, Any], plugin: str) -> tuple[int | None, Any]:
    """The last pluginConfig entry for ``plugin`` (as cfgValidator reads it): index, args."""
    found: tuple[int | None, Any] = (None, None)
    for j, config in enumerate(profile.get("pluginConfig") or []):
        if config.get("name") == plugin:
            args = config.get("args")
            found = (j, strip_type_meta(args) if isinstance(args, Mapping) else args)
    return found


def check_profile_map(
    profiles: Sequence[Mapping[str, Any]], expansions: Sequence[Expansion]
) -> list[FieldError]:
    """``profile.NewMap``'s ``cfgValidator``: names, and one queue sort (and args) for all."""
    errors: list[FieldError] = []
    names: set[str] = set()
    first_sort: str | None = None
    first_args: Any = None
    for i, (profile, expansion) in enumerate(zip(profiles, expansions, strict=True)):
        path = fe.index("profiles", i)
        name = profile.get("schedulerName") or ""
        if not name:
            errors.append(fe.required(fe.child(path, "schedulerName"), "scheduler name is needed"))
            continue
        if name in names:
            errors.append(
                FieldError(
                    fe.child(path, "schedulerName"),
                    DUPLICATE,
                    f"duplicate profile with scheduler name {json.dumps(name)}",
                    name,
                )
            )
            continue
        names.add(name)
        queue_sort = expansion.points["queueSort"]
        if not queue_sort:
            continue  # NewFramework already failed for this profile
        index, args = _queue_sort_args(profile, queue_sort[0])
        if first_sort is None:
            first_sort, first_args = queue_sort[0], args
            continue
        if queue_sort[0] != first_sort:
            errors.append(
                fe.invalid(
                    fe.child(path, "plugins", "queueSort"),
                    queue_sort[0],
                    f"different queue sort plugins for profile {json.dumps(name)}: "
                    f"{json.dumps(queue_sort[0])}, first: {json.dumps(first_sort)}",
                )
            )
        elif args != first_args:
            args_path = (
                fe.child(fe.index(fe.child(path, "pluginConfig"), index), "args")
                if index is not None
                else fe.child(path, "pluginConfig")
            )
            errors.append(
                fe.invalid(
                    args_path,
                    args,
                    f"different queue sort plugin args for profile {json.dumps(name)}",
                )
            )
    return errors


def framework_errors(
    doc: Mapping[str, Any], registry: Registry | None = None
) -> tuple[list[Expansion], list[FieldError]]:
    """Every profile's framework, and all startup errors (per profile, then the profile map).

    Warnings (names an incomplete ``registry`` does not know) stay on each expansion.
    """
    profiles: list[Mapping[str, Any]] = list(doc.get("profiles") or [])
    expansions = [
        check_profile(p, fe.index("profiles", i), registry) for i, p in enumerate(profiles)
    ]
    errors = [e for expansion in expansions for e in expansion.errors]
    errors.extend(check_profile_map(profiles, expansions))
    return expansions, errors
