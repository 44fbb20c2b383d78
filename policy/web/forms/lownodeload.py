"""LowNodeLoad's thresholds as editor rows (one per resource, per node pool) and back.

The rows show the args as written: a blank cell of a node pool inherits the top-level map
(koord-descheduler's pool defaulting), a blank top-level cell is unset. A submitted form turns
into a JSON merge patch of exactly the cells that changed, so nothing nobody set is written.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scoring import LOWNODELOAD_DEFAULTS

MAPS = ("lowThresholds", "highThresholds", "prodLowThresholds", "prodHighThresholds")
BASE_RESOURCES = ("cpu", "memory")
TOP = "top"


@dataclass
class PoolRows:
    key: str  # "top" or "pool<i>"
    name: str
    resources: list[str]
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)  # map → resource → value
    inherits: bool = False  # a node pool: blank cells inherit the top-level map


def _pools(args: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any], bool]]:
    pools = [(TOP, "top level (__default_node_pool__)", args, False)]
    for i, pool in enumerate(args.get("nodePools") or ()):
        if isinstance(pool, Mapping):
            pools.append((f"pool{i}", str(pool.get("name") or f"nodePools[{i}]"), pool, True))
    return pools


def rows(args: Mapping[str, Any]) -> list[PoolRows]:
    out = []
    for key, name, source, inherits in _pools(args):
        names = set(BASE_RESOURCES)
        for m in MAPS:
            names.update((source.get(m) or {}).keys())
        cells = {m: dict(source.get(m) or {}) for m in MAPS}
        out.append(PoolRows(key, name, sorted(names), cells, inherits))
    return out


def _number(text: str) -> float | int | None:
    text = text.strip()
    if not text:
        return None
    value = float(text)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return int(value) if value.is_integer() else value


def patch_from_form(
    args: Mapping[str, Any], data: Mapping[str, str]
) -> tuple[dict[str, Any], list[str]]:
    """The merge patch for the cells that changed, and the cells that are not numbers."""
    patch: dict[str, Any] = {}
    errors: list[str] = []
    pools = copy.deepcopy(list(args.get("nodePools") or []))
    pools_changed = False
    for pool in rows(args):
        for m in MAPS:
            for resource in pool.resources:
                name = f"{pool.key}-{m}-{resource}"
                if name not in data:
                    continue
                try:
                    wanted = _number(data[name])
                except ValueError:
                    errors.append(f"{pool.name}: {m}[{resource}]: {data[name]!r} is not a number")
                    continue
                if wanted == pool.cells[m].get(resource):
                    continue
                if pool.key == TOP:
                    patch.setdefault(m, {})[resource] = wanted
                else:
                    target = pools[int(pool.key[4:])]
                    values = dict(target.get(m) or {})
                    if wanted is None:
                        values.pop(resource, None)
                    else:
                        values[resource] = wanted
                    if values:
                        target[m] = values
                    else:
                        target.pop(m, None)  # an empty map would stop inheriting: leave it out
                    pools_changed = True
    if pools_changed:
        patch["nodePools"] = pools
    return patch, errors


# -- the args' scalar settings -----------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """A top-level scalar of LowNodeLoadArgs; ``path`` inside the args, ``kind`` how it is typed
    (bool: unset/true/false; int; text: a duration such as 5m)."""

    path: tuple[str, ...]
    kind: str
    help: str

    @property
    def name(self) -> str:
        return "setting-" + self.label

    @property
    def label(self) -> str:
        return ".".join(self.path)

    @property
    def default(self) -> str:
        """koord-descheduler's value when unset (the engine's defaults)."""
        return LOWNODELOAD_DEFAULTS[self.label]


_ANOMALY = (
    " The three anomaly defaults apply while anomalyCondition is absent; once it is written, "
    "an unset timeout is 0 (none) and an unset count is defaulted as koord-descheduler does."
)
SETTINGS = (
    Setting(("paused",), "bool", "Evict nothing (nodes are still classified)."),
    Setting(("dryRun",), "bool", "Log the evictions it would make, evict nothing."),
    Setting(("nodeFit",), "bool", "Evict a pod only if another node could take it."),
    Setting(("useDeviationThresholds",), "bool", "Thresholds are deviations from the mean."),
    Setting(("numberOfNodes",), "int", "Act only when more nodes than this are under low."),
    Setting(("nodeMetricExpirationSeconds",), "int", "Older NodeMetrics are skipped."),
    Setting(
        ("anomalyCondition", "consecutiveAbnormalities"),
        "int",
        "Rounds over high before a node is treated as overloaded (1: at once)." + _ANOMALY,
    ),
    Setting(
        ("anomalyCondition", "consecutiveNormalities"),
        "int",
        "Rounds back under high before it is normal again." + _ANOMALY,
    ),
    Setting(
        ("anomalyCondition", "timeout"), "text", "How long an anomaly is remembered." + _ANOMALY
    ),
    Setting(("detectorCacheTimeout",), "text", "How long a node's detector is kept."),
)


@dataclass(frozen=True)
class SettingRow:
    setting: Setting
    value: str  # as written ("" unset; "true"/"false" for booleans)


def _get(args: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = args
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def setting_rows(
    args: Mapping[str, Any], data: Mapping[str, str] | None = None
) -> list[SettingRow]:
    """Each setting as written in ``args`` (or as typed in ``data``, a refused form)."""
    return [
        SettingRow(s, data[s.name] if data and s.name in data else _text(_get(args, s.path)))
        for s in SETTINGS
    ]


def _typed(setting: Setting, text: str) -> Any:
    text = text.strip()
    if not text:
        return None
    if setting.kind == "bool":
        if text not in ("true", "false"):
            raise ValueError("is true, false or empty")
        return text == "true"
    if setting.kind == "int":
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a whole number") from None
    return text


def settings_patch(
    args: Mapping[str, Any], data: Mapping[str, str]
) -> tuple[dict[str, Any], list[str]]:
    """The merge patch of the settings that changed (an emptied one is removed: ``null``), and
    the ones typed wrong."""
    patch: dict[str, Any] = {}
    errors: list[str] = []
    for setting in SETTINGS:
        if setting.name not in data:
            continue
        try:
            wanted = _typed(setting, data[setting.name])
        except ValueError as exc:
            errors.append(f"{setting.label}: {exc}")
            continue
        if _text(wanted) == _text(_get(args, setting.path)):
            continue  # as written (5 and "5" alike): nothing to change
        target = patch
        for key in setting.path[:-1]:
            target = target.setdefault(key, {})
        target[setting.path[-1]] = wanted
    return patch, errors
