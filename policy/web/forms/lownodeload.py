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
