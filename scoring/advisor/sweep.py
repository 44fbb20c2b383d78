"""A LoadAware threshold swept over a range: at each value, how many nodes the load filter
refuses (as the dashboard's "filtered now" counts them: a non-prod pod that adds nothing) and
how many of the snapshot's pending pods the profile can place.

Each value runs the plugin's own Filter with the args changed in that one threshold; its
state is made from the profile's (``LoadAwareScheduling.share_state``) and dropped after
(``Snapshot.transient_extensions``). Both counts are monotonic in the threshold (a higher one
only lets more nodes pass), so each pending pod's class is asked at a few values only (a
binary search for the lowest value that places it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from scoring.advisor.pending import PendingPods
from scoring.engine import Engine, Framework
from scoring.framework import Cycle
from scoring.objects import parse_pod
from scoring.plugins.loadaware.args import PLUGIN_NAME
from scoring.plugins.loadaware.filter import filter_nodes
from scoring.plugins.loadaware.plugin import LoadAwareScheduling
from scoring.plugins.loadaware.state import IncomingPod
from scoring.snapshot import Snapshot

PROBE = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "schedboard-sweep-probe", "namespace": "default"},
    "spec": {"containers": [{"name": "probe", "image": "none"}]},
}


@dataclass(frozen=True)
class SweepRow:
    threshold: int
    filtered: int
    pending_placeable: int
    by_pool: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "filtered": self.filtered,
            "pending_placeable": self.pending_placeable,
            "by_pool": self.by_pool,
        }


def swept_field(plugin: LoadAwareScheduling) -> str:
    """The thresholds the load filter applies to a non-prod pod: the aggregated ones when that
    profile is active (``filter.choose``), else ``usageThresholds``."""
    aggregated = plugin.config.aggregated
    return "aggregated.usageThresholds" if aggregated and aggregated.filters else "usageThresholds"


def loadaware_sweep(
    engine: Engine,
    profile: str,
    snapshot: Snapshot,
    now: datetime,
    resource: str,
    thresholds: Sequence[int],
    pools: Sequence[str] | None = None,
) -> list[SweepRow]:
    """One row per threshold of ``thresholds`` (ascending) for ``resource`` of ``profile``'s
    LoadAware args; ``pools`` names each node's pool for ``by_pool`` (filtered per pool)."""
    base_framework = engine.frameworks[profile]
    base = base_framework.instances[PLUGIN_NAME]
    assert isinstance(base, LoadAwareScheduling)
    cycle = Cycle(parse_pod(PROBE), snapshot, now)
    field_name = swept_field(base)
    with snapshot.transient_extensions():
        frameworks = [
            _with_threshold(base_framework, base, cycle, field_name, resource, t)
            for t in thresholds
        ]
        filtered = [_filtered(f, cycle) for f in frameworks]
        placeable = _placeable(engine, frameworks, snapshot, now, profile)
    rows = []
    for k, threshold in enumerate(thresholds):
        by_pool: dict[str, int] = {}
        if pools is not None:
            counts = Counter(pools[int(i)] for i in np.flatnonzero(filtered[k]))
            by_pool = {pool: counts.get(pool, 0) for pool in sorted(set(pools))}
        rows.append(SweepRow(threshold, int(filtered[k].sum()), placeable[k], by_pool))
    return rows


def _with_threshold(
    framework: Framework,
    base: LoadAwareScheduling,
    cycle: Cycle,
    field_name: str,
    resource: str,
    value: int,
) -> Framework:
    args: dict[str, Any] = {**base.args}
    holder = args
    *parents, last = field_name.split(".")
    for name in parents:
        holder[name] = dict(holder.get(name) or {})
        holder = holder[name]
    holder[last] = {**(holder.get(last) or {}), resource: value}
    changed = framework.with_plugin_args(PLUGIN_NAME, args)
    plugin = changed.instances[PLUGIN_NAME]
    assert isinstance(plugin, LoadAwareScheduling)
    plugin.share_state(cycle, base)
    return changed


def _filtered(framework: Framework, cycle: Cycle) -> Any:
    """The nodes the load filter refuses for a non-prod pod that adds nothing."""
    plugin = framework.instances[PLUGIN_NAME]
    assert isinstance(plugin, LoadAwareScheduling)
    state = plugin.state(Cycle(cycle.pod, cycle.snapshot, cycle.now))
    empty = IncomingPod(np.zeros(len(state.resources), dtype=np.int64), "", daemonset=False)
    return ~filter_nodes(plugin.config, state, empty, cycle.now).passed


def _placeable(
    engine: Engine,
    frameworks: Sequence[Framework],
    snapshot: Snapshot,
    now: datetime,
    profile: str,
) -> list[int]:
    """Pending pods of ``profile`` each framework places: per class, the lowest threshold
    index that places it, by binary search (placing is monotonic in the threshold)."""
    placed = [0] * (len(frameworks) + 1)
    pending = PendingPods(engine, snapshot, parse_pod(PROBE), now)
    for pod, size in pending.classes:
        if pod.scheduler_name != profile:
            continue
        low, high = 0, len(frameworks)  # the answer is in [low, high]; high: never
        while low < high:
            middle = (low + high) // 2
            if len(frameworks[middle].feasible(pod, snapshot, now)):
                high = middle
            else:
                low = middle + 1
        placed[low] += size
    out, running = [], 0
    for k in range(len(frameworks)):
        running += placed[k]
        out.append(running)
    return out
