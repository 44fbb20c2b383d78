"""From a profile's merged ``plugins`` to the ordered, weighted plugin list per extension point.

This is what ``frameworkImpl`` builds in ``NewFramework`` (``pkg/scheduler/framework/runtime/
framework.go``, Kubernetes 1.35), reproduced step by step:

1. ``updatePluginList`` for each extension point: the plugins listed at that point, in order.
   Errors: ``<Type>Plugin "X" does not exist``, ``plugin "X" does not extend <Type>Plugin plugin``,
   ``plugin "X" already registered as "<Type>Plugin"``.
2. ``expandMultiPointPlugins`` (only when ``multiPoint.enabled`` is not empty), per extension
   point, skipped entirely when that point has ``disabled: ['*']``: every multiPoint plugin that
   implements the point, is not disabled there and is not already listed there is registered.
   A plugin listed both at the point and in multiPoint is an explicit override and keeps the
   point's settings. Order: overrides (in the point's order), then multiPoint plugins, then the
   rest of the point's list. A plugin twice in multiPoint is ``already registered``.
3. ``getScoreWeights`` over ``score.enabled`` then ``multiPoint.enabled``: the first entry for a
   plugin wins (so a weight at ``score`` beats the multiPoint weight); an unset or zero weight is
   1. Upstream does not reject negative weights, and neither does this.

Names are looked up in the target's :class:`~scoring.config.registries.Registry`. A name missing
from it, or listed at a point it is not known to implement, is an error when the registry is
complete (and the plugin's points are) and a warning otherwise, with the same field, type and
message. Upstream stops at the first error; here every error is collected. An unknown plugin
listed at a specific extension point still occupies that point (as if it existed and implemented
it), so the queue-sort and bind counts reflect what the configuration asks for. Errors are
reported on the merged (defaulted) lists, the ones in the defaulted document: a user's
``multiPoint.enabled[k]`` comes after the default plugins there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoring import field_errors as fe
from scoring.config.catalog import EXTENSION_POINTS, PLUGIN_TYPE_NAMES
from scoring.config.registries import Registry, catalog_registry
from scoring.errors import DUPLICATE, INVALID, FieldError
from scoring.goint import INT64_MAX

# The order of frameworkImpl.getExtensionPoints(), which decides which error comes first.
FRAMEWORK_ORDER = (
    "preFilter",
    "filter",
    "postFilter",
    "reserve",
    "preScore",
    "score",
    "preBind",
    "bind",
    "postBind",
    "permit",
    "preEnqueue",
    "queueSort",
)

MAX_NODE_SCORE = 100
MAX_TOTAL_SCORE = INT64_MAX


@dataclass
class Expansion:
    """One profile's framework: plugin names per extension point, score weights, errors."""

    points: dict[str, list[str]] = field(default_factory=dict)
    score_weights: dict[str, int] = field(default_factory=dict)
    errors: list[FieldError] = field(default_factory=list)
    warnings: list[FieldError] = field(default_factory=list)

    def weight(self, point: str, name: str) -> int:
        """The effective weight: the score weight at ``score``, 0 elsewhere."""
        return self.score_weights.get(name, 1) if point == "score" else 0


def _enabled(plugins: Mapping[str, Any], point: str) -> list[Mapping[str, Any]]:
    return list((plugins.get(point) or {}).get("enabled") or [])


def _disabled_names(plugins: Mapping[str, Any], point: str) -> set[str]:
    return {p.get("name", "") for p in (plugins.get(point) or {}).get("disabled") or []}


def _specific_lists(
    plugins: Mapping[str, Any], path: str, registry: Registry, expansion: Expansion
) -> dict[str, list[str]]:
    """``updatePluginList`` for every extension point."""
    errors = expansion.errors
    lists: dict[str, list[str]] = {}
    for point in FRAMEWORK_ORDER:
        type_name = PLUGIN_TYPE_NAMES[point]
        names: list[str] = []
        for k, plugin in enumerate(_enabled(plugins, point)):
            name = plugin.get("name", "")
            entry_path = fe.index(fe.child(path, "plugins", point, "enabled"), k)
            spec = registry.lookup(name)
            if spec is None:
                error = FieldError(
                    entry_path, INVALID, f"{type_name} {json.dumps(name)} does not exist", name
                )
                (errors if registry.complete else expansion.warnings).append(error)
            elif not spec.implements(point):
                error = FieldError(
                    entry_path,
                    INVALID,
                    f"plugin {json.dumps(name)} does not extend {type_name} plugin",
                    name,
                )
                if registry.complete and spec.points_complete:
                    errors.append(error)
                    continue
                expansion.warnings.append(error)
            if name in names:
                errors.append(
                    FieldError(
                        entry_path,
                        DUPLICATE,
                        f"plugin {json.dumps(name)} already registered as {json.dumps(type_name)}",
                        name,
                    )
                )
                continue
            names.append(name)
        lists[point] = names
    return lists


def _expand_multi_point(
    plugins: Mapping[str, Any],
    path: str,
    lists: dict[str, list[str]],
    registry: Registry,
    expansion: Expansion,
) -> None:
    """``expandMultiPointPlugins``, in place on ``lists``.

    A name missing from an incomplete registry cannot be expanded (its extension points are
    unknown): it is reported once as a warning and left out.
    """
    errors = expansion.errors
    multi_point = _enabled(plugins, "multiPoint")
    if not multi_point:
        return
    mp_path = fe.child(path, "plugins", "multiPoint", "enabled")
    reported: set[int] = set()
    for point in FRAMEWORK_ORDER:
        disabled = _disabled_names(plugins, point)
        if "*" in disabled:
            continue  # all plugins disabled at this point: no multiPoint expansion
        type_name = PLUGIN_TYPE_NAMES[point]
        specific = lists[point]
        configured = [p.get("name", "") for p in _enabled(plugins, point)]
        registered: list[str] = []
        overrides: set[str] = set()
        for k, plugin in enumerate(multi_point):
            name = plugin.get("name", "")
            spec = registry.lookup(name)
            if spec is None:
                if k not in reported:
                    reported.add(k)
                    error = FieldError(
                        fe.index(mp_path, k),
                        INVALID,
                        f"{type_name} {json.dumps(name)} does not exist",
                        name,
                    )
                    if registry.complete:
                        errors.append(error)
                    else:
                        expansion.warnings.append(error)
                        errors.extend(_repeated_unknown(multi_point, k, mp_path))
                continue
            if not spec.implements(point) or name in disabled:
                continue
            if name in configured:
                overrides.add(name)  # the extension point's own setting wins
                continue
            if name in registered:
                if k not in reported:
                    reported.add(k)
                    errors.append(
                        FieldError(
                            fe.index(mp_path, k),
                            DUPLICATE,
                            f"plugin {json.dumps(name)} already registered as "
                            f"{json.dumps(type_name)}",
                            name,
                        )
                    )
                continue
            registered.append(name)
        lists[point] = (
            [n for n in specific if n in overrides]
            + registered
            + [n for n in specific if n not in overrides]
        )


def _repeated_unknown(
    multi_point: Sequence[Mapping[str, Any]], k: int, mp_path: str
) -> list[FieldError]:
    """A name a registry does not know, repeated in multiPoint: whatever points it implements,
    the framework registers it twice there (``already registered``)."""
    name = multi_point[k].get("name", "")
    if any(p.get("name", "") == name for p in multi_point[:k]):
        return [
            FieldError(
                fe.index(mp_path, k),
                DUPLICATE,
                f"plugin {json.dumps(name)} already registered",
                name,
            )
        ]
    return []


def _score_weights(
    plugins: Mapping[str, Any], path: str, registry: Registry, errors: list[FieldError]
) -> dict[str, int]:
    """``getScoreWeights`` over ``score.enabled`` then ``multiPoint.enabled``."""
    weights: dict[str, int] = {}
    total = 0
    entries: Sequence[tuple[bool, Mapping[str, Any]]] = [
        (True, p) for p in _enabled(plugins, "score")
    ] + [(False, p) for p in _enabled(plugins, "multiPoint")]
    for at_score, plugin in entries:
        name = plugin.get("name", "")
        spec = registry.lookup(name)
        implements = spec.implements("score") if spec is not None else at_score
        if not implements or name in weights:
            continue
        weight = plugin.get("weight") or 0
        weights[name] = weight if weight != 0 else 1
        if weights[name] * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
            errors.append(
                fe.invalid(
                    fe.child(path, "plugins", "score"),
                    weights[name],
                    "total score of Score plugins could overflow",
                )
            )
            break
        total += weights[name] * MAX_NODE_SCORE
    return weights


def expand_profile(
    plugins: Mapping[str, Any], path: str, registry: Registry | None = None
) -> Expansion:
    """The framework a profile's merged ``plugins`` builds; ``path`` is ``profiles[i]``.

    ``registry`` is the target's; by default the plugins the engine's catalog knows (complete).
    """
    registry = registry if registry is not None else catalog_registry()
    expansion = Expansion()
    lists = _specific_lists(plugins, path, registry, expansion)
    _expand_multi_point(plugins, path, lists, registry, expansion)
    expansion.points = {point: lists[point] for point in EXTENSION_POINTS}
    expansion.score_weights = _score_weights(plugins, path, registry, expansion.errors)
    return expansion
