"""Every node's load as Koordinator's LoadAwareScheduling sees it, for the dashboard.

Nothing here re-implements the plugin: the thresholds, their source, the measured usage, the
estimates of recently placed pods and the verdict all come from the plugin's own state
(:class:`~scoring.plugins.loadaware.state.LoadAwareState`, built once per snapshot and args and
shared with evaluations) and its own Filter, run for a pod that adds nothing. So "filtered
now" means: any non-prod pod, even an empty one, would be refused by the load filter.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from policy.web import format as fmt
from scoring.framework import Cycle
from scoring.objects import parse_pod
from scoring.plugins.loadaware import LoadAwareScheduling
from scoring.plugins.loadaware.args import default_args
from scoring.plugins.loadaware.estimator import go_round
from scoring.plugins.loadaware.filter import (
    estimated_usage,
    expired_nodes,
    filter_nodes,
    filter_plan,
)
from scoring.plugins.loadaware.state import IncomingPod, LoadAwareState
from scoring.plugins.loadaware.thresholds import FROM_ANNOTATION
from scoring.plugins.loadaware.usage import base_usage
from scoring.snapshot import Snapshot

RESOURCES = ("cpu", "memory")
PLUGIN = LoadAwareScheduling.name

# A pod that asks for nothing: the state is per snapshot and args, the pod only names a cycle.
_PROBE = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "schedboard-dashboard-probe", "namespace": "default"},
    "spec": {"containers": [{"name": "probe", "image": "none"}]},
}


def default_plugin() -> LoadAwareScheduling:
    """The plugin with Koordinator's default args (no configuration enables it)."""
    return LoadAwareScheduling(default_args({}))


@dataclass(frozen=True)
class Usage:
    """One resource of one node, in percent of the allocatable LoadAware judges by."""

    measured: int | None  # the NodeMetric's usage (None: no usable NodeMetric)
    estimated: int | None  # what recently placed pods still add (estimates)
    total: int | None  # measured + estimated, rounded as the plugin rounds
    threshold: int  # 0: not checked
    allocatable: int

    @property
    def over(self) -> bool:
        return self.total is not None and self.threshold > 0 and self.total > self.threshold

    # Widths of the table's bar, in percent of its length (capped at 100).
    @property
    def measured_width(self) -> int:
        return min(self.measured or 0, 100)

    @property
    def estimated_width(self) -> int:
        return max(min(self.total or 0, 100) - self.measured_width, 0)

    @property
    def threshold_x(self) -> int:
        return min(self.threshold, 100)

    @property
    def ratio(self) -> float | None:
        """total / threshold (None when unmeasured or unchecked): 1.0 is at the threshold."""
        if self.total is None or not self.threshold:
            return None
        return self.total / self.threshold


@dataclass(frozen=True)
class NodeLoad:
    """One node's line on the dashboard."""

    index: int
    name: str
    zone: str
    pool: str
    unschedulable: bool
    pods: int
    metric: str  # fresh | expired | missing
    metric_age: float | None  # seconds, at the snapshot's time
    has_usage: bool
    threshold_profile: str  # node | aggregated (what a non-prod pod is judged by)
    threshold_source: str  # args | node annotation
    annotated: bool
    annotation_error: str | None
    usage: Mapping[str, Usage]
    filtered: str | None  # the load filter's reason, None when it passes
    labels: tuple[str, ...] = ()  # "key=value", for the node search

    # Sortable columns (back-compatible names: cpu/memory are allocatable, *_used measured %).
    @property
    def cpu(self) -> int:
        return self.usage["cpu"].allocatable

    @property
    def memory(self) -> int:
        return self.usage["memory"].allocatable

    @property
    def cpu_used(self) -> int | None:
        return self.usage["cpu"].measured

    @property
    def memory_used(self) -> int | None:
        return self.usage["memory"].measured

    @property
    def cpu_load(self) -> int | None:
        return self.usage["cpu"].total

    @property
    def memory_load(self) -> int | None:
        return self.usage["memory"].total

    @property
    def age(self) -> float | None:
        return self.metric_age

    @property
    def over(self) -> bool:
        return any(u.over for u in self.usage.values())

    @property
    def cpu_cores(self) -> str:
        return fmt.cores(self.cpu)

    @property
    def memory_text(self) -> str:
        return fmt.binary(self.memory)

    @property
    def age_text(self) -> str:
        return fmt.age(self.metric_age)

    @property
    def usage_list(self) -> list[tuple[str, Usage]]:
        return list(self.usage.items())

    @property
    def state(self) -> str:
        """The node's most important condition, for filtering and colour."""
        if self.filtered:
            return "filtered"
        if self.unschedulable:
            return "cordoned"
        if self.metric != "fresh":
            return self.metric
        return "ok"


@dataclass(frozen=True)
class ArgsInfo:
    """The LoadAware args in force and where they come from."""

    origin: str  # e.g. "configuration 3 (v5), profile default-scheduler" or Koordinator defaults
    profile: str | None
    filter_enabled: bool
    score_enabled: bool
    thresholds: Mapping[str, int]
    prod_thresholds: Mapping[str, int]
    aggregated: str | None
    expiration_seconds: int | None
    filter_expired: bool
    schedule_when_expired: bool | None
    args: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True)
class ClusterLoad:
    rows: list[NodeLoad]
    args: ArgsInfo
    taken_at: datetime
    pods_bound: int
    pods_pending: int
    problems: list[str] = field(default_factory=list)

    @property
    def metrics(self) -> dict[str, int]:
        counts = Counter(node.metric for node in self.rows)
        return {key: counts[key] for key in ("fresh", "expired", "missing")}

    @property
    def filtered(self) -> int:
        return sum(1 for node in self.rows if node.filtered)

    @property
    def cordoned(self) -> int:
        return sum(1 for node in self.rows if node.unschedulable)

    @property
    def annotated(self) -> int:
        return sum(1 for node in self.rows if node.annotated)

    def over(self, resource: str) -> int:
        return sum(1 for node in self.rows if node.usage[resource].over)

    def reasons(self) -> list[tuple[str, int]]:
        """The load filter's reasons with their node counts, most frequent first."""
        counts = Counter(node.filtered for node in self.rows if node.filtered)
        return sorted(counts.items(), key=lambda item: (-item[1], item[0]))

    @property
    def nodes(self) -> int:
        """How many nodes (the dashboard's headline count)."""
        return len(self.rows)


def _percent(used: int, total: int) -> int | None:
    """The plugin's ``round(float64(used) / float64(total) * 100)``; None without allocatable."""
    if total == 0:
        return None
    return int(go_round(float(used) / float(total) * 100))


def plugin_state(
    plugin: LoadAwareScheduling, snapshot: Snapshot, now: datetime
) -> tuple[LoadAwareState, Cycle]:
    """The plugin's state for ``snapshot`` (shared with evaluations of the same args)."""
    cycle = Cycle(parse_pod(_PROBE), snapshot, now)
    return plugin.state(cycle), cycle


def cluster_load(
    snapshot: Snapshot,
    plugin: LoadAwareScheduling,
    now: datetime,
    *,
    origin: str,
    profile: str | None,
    filter_enabled: bool = True,
    score_enabled: bool = True,
) -> ClusterLoad:
    """Every node's usage against its effective threshold, and the load filter's verdict."""
    args = plugin.config
    state, _ = plugin_state(plugin, snapshot, now)
    empty = IncomingPod(np.zeros(len(state.resources), dtype=np.int64), "", daemonset=False)
    plan = filter_plan(state, pod_is_prod=False)
    verdict = filter_nodes(args, state, empty, now)
    total = estimated_usage(state, plan, empty)
    measured = np.zeros_like(total)
    for kind, members in plan.kinds:
        usage_of_kind = base_usage(kind, state.metrics, state.cache)
        measured = np.where(members, usage_of_kind.measured, measured)
    metrics = state.metrics
    expired = expired_nodes(args, state, now)
    now_us = int(now.timestamp() * 1_000_000)
    rows = [state.resources.index(name) for name in RESOURCES]
    groups = state.thresholds.group_ids
    nodes: list[NodeLoad] = []
    for i, node in enumerate(snapshot.nodes):
        choice = plan.choices[int(groups[i])]
        profile_i = state.thresholds.profiles[int(groups[i])]
        present = bool(metrics.present[i])
        usable = present and bool(metrics.has_info[i]) and not bool(expired[i])
        usage = {}
        for name, k in zip(RESOURCES, rows, strict=True):
            alloc = int(state.allocatable[k, i])
            seen = _percent(int(measured[k, i]), alloc) if usable else None
            load = _percent(int(total[k, i]), alloc) if usable else None
            usage[name] = Usage(
                measured=seen,
                estimated=None if seen is None or load is None else load - seen,
                total=load,
                threshold=int(plan.limits[k, i]),
                allocatable=alloc,
            )
        status = verdict.status(i)
        nodes.append(
            NodeLoad(
                index=i,
                name=node.name,
                zone=node.labels.get("topology.kubernetes.io/zone", ""),
                pool=node.labels.get("pool", ""),
                unschedulable=node.unschedulable,
                pods=len(snapshot.pods_on_node[i]),
                metric="missing" if not present else ("expired" if expired[i] else "fresh"),
                metric_age=(now_us - int(metrics.update_us[i])) / 1e6
                if present and metrics.has_update[i]
                else None,
                has_usage=present and bool(metrics.has_info[i]),
                threshold_profile=choice.profile,
                threshold_source=choice.source,
                annotated=profile_i.annotation is not None,
                annotation_error=profile_i.annotation_error,
                usage=usage,
                filtered=None if status.ok else status.message,
                labels=tuple(f"{k}={v}" for k, v in sorted(node.labels.items())),
            )
        )
    base = state.thresholds.base
    aggregated = None
    if base.aggregated is not None:
        agg = base.aggregated
        aggregated = ", ".join(
            f"{name} {value}%"
            for name, value in zip(state.resources, agg.thresholds, strict=True)
            if value
        )
        aggregated = f"{aggregated} on {agg.kind}"
    info = ArgsInfo(
        origin=origin,
        profile=profile,
        filter_enabled=filter_enabled,
        score_enabled=score_enabled,
        thresholds=dict(zip(state.resources, base.usage, strict=True)),
        prod_thresholds={
            name: value for name, value in zip(state.resources, base.prod, strict=True) if value
        },
        aggregated=aggregated,
        expiration_seconds=args.node_metric_expiration_seconds,
        filter_expired=bool(args.filter_expired_node_metrics),
        schedule_when_expired=args.enable_schedule_when_node_metrics_expired,
        args=plugin.args,
    )
    return ClusterLoad(
        rows=nodes,
        args=info,
        taken_at=now,
        pods_bound=sum(len(pods) for pods in snapshot.pods_on_node) + len(snapshot.unbound),
        pods_pending=len(snapshot.pending),
    )


__all__ = ["FROM_ANNOTATION", "PLUGIN", "ClusterLoad", "NodeLoad", "Usage", "cluster_load"]
