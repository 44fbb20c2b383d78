"""``loadaware-threshold``: the lowest LoadAware usage threshold that lets a node take the pod.

The filter fails a node when ``round(estimated / allocatable * 100) > threshold`` (load_aware.go
``Filter``, see scoring/plugins/loadaware/filter.py); a node the threshold alone keeps off needs
the threshold raised to that rounded percentage. Only thresholds from the plugin's args are
proposed: a node whose thresholds come from its own annotation is not moved by the args.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from scoring.advisor.blockers import Blockers
from scoring.framework import Cycle
from scoring.plugins.loadaware.args import PLUGIN_NAME
from scoring.plugins.loadaware.filter import estimated_usage, filter_plan
from scoring.plugins.loadaware.plugin import LoadAwareScheduling
from scoring.plugins.loadaware.thresholds import FROM_ARGS

TRIED = 3  # threshold values proposed per field and resource, lowest first
# Where each threshold profile of the filter lives in the args.
FIELDS = {"node": "usageThresholds", "prod": "prodUsageThresholds", "aggregated": "aggregated"}


@dataclass(frozen=True)
class ThresholdChange:
    """``field`` (a dotted path in the plugin's v1 args) from ``current`` to ``value``."""

    profile: str
    field: str
    resource: str
    current: int
    value: int
    nodes: int  # nodes this value alone frees

    def args(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The plugin's args with this change."""
        changed = copy.deepcopy(dict(args))
        holder = changed
        *parents, last = self.field.split(".")
        for name in parents:
            holder = holder.setdefault(name, {})
        holder.setdefault(last, {})[self.resource] = self.value
        return changed

    @property
    def patch(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "plugin": PLUGIN_NAME,
            "field": f"{self.field}.{self.resource}",
            "current": self.current,
            "value": self.value,
        }


def changes(blockers: Blockers) -> list[ThresholdChange]:
    """Per (threshold field, resource): the lowest values that free a node, lowest first."""
    decision = blockers.decision
    plugin = decision.plugins.get(PLUGIN_NAME)
    if not isinstance(plugin, LoadAwareScheduling) or not blockers.any(PLUGIN_NAME):
        return []
    nodes = np.flatnonzero(blockers.only((PLUGIN_NAME,)))
    if len(nodes) == 0:
        return []
    needed = _needed_percent(plugin, decision.cycle, nodes)
    state = plugin.state(decision.cycle)
    plan = filter_plan(state, plugin.incoming(decision.cycle).prod)
    groups = state.thresholds.group_ids[nodes]
    limits = plan.limits[:, nodes]
    over = plan.checked_limits[:, nodes] & (needed > limits)
    found: dict[tuple[str, str], dict[int, int]] = {}
    for j in range(len(nodes)):
        rows = np.flatnonzero(over[:, j])
        choice = plan.choices[int(groups[j])]
        if len(rows) != 1 or choice.source != FROM_ARGS:
            continue  # several thresholds, or the node's own annotation: not one args value
        k = int(rows[0])
        field = FIELDS[choice.profile]
        field = f"{field}.usageThresholds" if choice.profile == "aggregated" else field
        values = found.setdefault((field, state.resources[k]), {})
        value = int(needed[k, j])
        values[value] = values.get(value, 0) + 1
    out = []
    for (field, resource), values in found.items():
        current = _current(plugin.args, field, resource)
        freed = 0
        for value in sorted(v for v in values if v <= 100)[:TRIED]:
            freed += values[value]
            out.append(ThresholdChange(decision.profile, field, resource, current, value, freed))
    return out


def _current(args: Mapping[str, Any], field: str, resource: str) -> int:
    holder: Any = args
    for name in field.split("."):
        holder = holder.get(name) if isinstance(holder, Mapping) else None
    value = holder.get(resource) if isinstance(holder, Mapping) else None
    return int(value) if isinstance(value, int) else 0


def _needed_percent(plugin: LoadAwareScheduling, cycle: Cycle, nodes: Any) -> Any:
    """``round(estimated / allocatable * 100)`` per resource × node, half away from zero."""
    state = plugin.state(cycle)
    incoming = plugin.incoming(cycle)
    plan = filter_plan(state, incoming.prod)
    estimated = estimated_usage(state, plan, incoming, nodes)
    ratio = estimated.astype(np.float64) / state.allocatable_float[:, nodes] * 100.0
    return np.floor(ratio + 0.5).astype(np.int64)
