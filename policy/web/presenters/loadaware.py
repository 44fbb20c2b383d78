"""Every node's load as Koordinator's LoadAwareScheduling sees it, for the dashboard.

The numbers are the engine's (:func:`scoring.node_loads`: the plugin's own state and Filter,
run for a pod that adds nothing); this module adds the node's place in the cluster and what
the table and its bars show.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from policy.web import format as fmt
from scoring import (
    FROM_ANNOTATION,
    LoadAwareScheduling,
    NodeLoadFacts,
    ResourceLoad,
    Snapshot,
    default_loadaware_args,
    node_loads,
)

RESOURCES = ("cpu", "memory")
PLUGIN = LoadAwareScheduling.name


def default_plugin() -> LoadAwareScheduling:
    """The plugin with Koordinator's default args (no configuration enables it)."""
    return LoadAwareScheduling(default_loadaware_args({}))


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
    facts, in_force = node_loads(plugin, snapshot, now, RESOURCES)
    rows = [_row(snapshot, fact) for fact in facts]
    info = ArgsInfo(
        origin=origin,
        profile=profile,
        filter_enabled=filter_enabled,
        score_enabled=score_enabled,
        thresholds=in_force.thresholds,
        prod_thresholds=in_force.prod_thresholds,
        aggregated=in_force.aggregated,
        expiration_seconds=in_force.expiration_seconds,
        filter_expired=in_force.filter_expired,
        schedule_when_expired=in_force.schedule_when_expired,
        args=plugin.args,
    )
    return ClusterLoad(
        rows=rows,
        args=info,
        taken_at=now,
        pods_bound=sum(len(pods) for pods in snapshot.pods_on_node) + len(snapshot.unbound),
        pods_pending=len(snapshot.pending),
    )


def _row(snapshot: Snapshot, fact: NodeLoadFacts) -> NodeLoad:
    node = snapshot.nodes[fact.index]
    return NodeLoad(
        index=fact.index,
        name=node.name,
        zone=node.labels.get("topology.kubernetes.io/zone", ""),
        pool=node.labels.get("pool", ""),
        unschedulable=node.unschedulable,
        pods=len(snapshot.pods_on_node[fact.index]),
        metric=fact.metric,
        metric_age=fact.metric_age,
        has_usage=fact.has_usage,
        threshold_profile=fact.threshold_profile,
        threshold_source=fact.threshold_source,
        annotated=fact.annotated,
        annotation_error=fact.annotation_error,
        usage={name: _usage(load) for name, load in fact.resources.items()},
        filtered=fact.filtered,
        labels=tuple(f"{k}={v}" for k, v in sorted(node.labels.items())),
    )


def _usage(load: ResourceLoad) -> Usage:
    measured, total = load.measured, load.total
    return Usage(
        measured=measured,
        estimated=None if measured is None or total is None else total - measured,
        total=total,
        threshold=load.threshold,
        allocatable=load.allocatable,
    )


__all__ = ["FROM_ANNOTATION", "PLUGIN", "ClusterLoad", "NodeLoad", "Usage", "cluster_load"]
