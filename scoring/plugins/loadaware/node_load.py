"""Every node's load as LoadAwareScheduling sees it: the plugin's own numbers, for people.

Nothing here re-implements the plugin: the thresholds and their source, the measured usage,
the estimates of recently placed pods and the verdict all come from the plugin's state
(:class:`~scoring.plugins.loadaware.state.LoadAwareState`, built once per snapshot and args
and shared with evaluations) and its own Filter, run for a pod that adds nothing. So
"filtered" means: any non-prod pod, even an empty one, would be refused by the load filter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from scoring.framework import Cycle
from scoring.objects import parse_pod
from scoring.plugins.loadaware.estimator import go_round
from scoring.plugins.loadaware.explain import explain_node
from scoring.plugins.loadaware.filter import (
    FilterPlan,
    estimated_usage,
    expired_nodes,
    filter_nodes,
    filter_plan,
)
from scoring.plugins.loadaware.plugin import LoadAwareScheduling
from scoring.plugins.loadaware.state import IncomingPod, LoadAwareState
from scoring.plugins.loadaware.thresholds import ThresholdProfile
from scoring.plugins.loadaware.usage import base_usage
from scoring.snapshot import IntArray, Snapshot

# A pod that asks for nothing: the state is per snapshot and args, the pod only names a cycle.
_PROBE = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "schedboard-load-probe", "namespace": "default"},
    "spec": {"containers": [{"name": "probe", "image": "none"}]},
}


@dataclass(frozen=True)
class ResourceLoad:
    """One resource of one node, in percent of the allocatable LoadAware judges by."""

    measured: int | None  # the NodeMetric's usage (None: no usable NodeMetric)
    total: int | None  # measured + estimates of recently placed pods, rounded as the plugin does
    threshold: int  # 0: not checked
    allocatable: int


@dataclass(frozen=True)
class NodeLoadFacts:
    """One node's load, thresholds and load-filter verdict."""

    index: int
    metric: str  # fresh | expired | missing
    metric_age: float | None  # seconds, at the cycle's time
    has_usage: bool
    threshold_profile: str  # node | aggregated (what a non-prod pod is judged by)
    threshold_source: str  # args | node annotation
    annotated: bool
    annotation_error: str | None
    resources: Mapping[str, ResourceLoad]
    filtered: str | None  # the load filter's reason, None when it passes


@dataclass(frozen=True)
class ArgsInForce:
    """The args' cluster-wide thresholds and metric rules, by resource name."""

    thresholds: Mapping[str, int]
    prod_thresholds: Mapping[str, int]  # only the resources with a threshold
    aggregated: str | None  # e.g. "cpu 70% on p95"
    expiration_seconds: int | None
    filter_expired: bool
    schedule_when_expired: bool | None


@dataclass(frozen=True)
class NodeLoadDetail:
    """One node under the plugin: its Filter and Score arithmetic and its threshold profile."""

    explanation: dict[str, Any]
    thresholds: ThresholdProfile
    resources: tuple[str, ...]


def node_loads(
    plugin: LoadAwareScheduling,
    snapshot: Snapshot,
    now: datetime,
    resources: Sequence[str] = ("cpu", "memory"),
) -> tuple[list[NodeLoadFacts], ArgsInForce]:
    """Every node of ``snapshot`` under ``plugin``'s args at ``now``, in snapshot order."""
    state = state_at(plugin, snapshot, now)
    empty = adds_nothing(state)
    plan = filter_plan(state, pod_is_prod=False)
    verdict = filter_nodes(plugin.config, state, empty, now)
    total = estimated_usage(state, plan, empty)
    measured = _measured(state, plan, total)
    expired = expired_nodes(plugin.config, state, now)
    rows = [(name, state.resources.index(name)) for name in resources]
    now_us = int(now.timestamp() * 1_000_000)
    metrics, groups = state.metrics, state.thresholds.group_ids
    facts: list[NodeLoadFacts] = []
    for i in range(len(snapshot.nodes)):
        choice = plan.choices[int(groups[i])]
        profile = state.thresholds.profiles[int(groups[i])]
        present = bool(metrics.present[i])
        usable = present and bool(metrics.has_info[i]) and not bool(expired[i])
        status = verdict.status(i)
        facts.append(
            NodeLoadFacts(
                index=i,
                metric="missing" if not present else ("expired" if expired[i] else "fresh"),
                metric_age=(now_us - int(metrics.update_us[i])) / 1e6
                if present and metrics.has_update[i]
                else None,
                has_usage=present and bool(metrics.has_info[i]),
                threshold_profile=choice.profile,
                threshold_source=choice.source,
                annotated=profile.annotation is not None,
                annotation_error=profile.annotation_error,
                resources={
                    name: _resource(state, plan.limits, measured, total, k, i, usable)
                    for name, k in rows
                },
                filtered=None if status.ok else status.message,
            )
        )
    return facts, _args_in_force(plugin, state)


def node_load_detail(
    plugin: LoadAwareScheduling, snapshot: Snapshot, now: datetime, index: int
) -> NodeLoadDetail:
    """Node ``index``'s explanation for a pod that adds nothing, and its thresholds."""
    state = state_at(plugin, snapshot, now)
    explanation = explain_node(
        plugin.config, plugin.weights, state, adds_nothing(state), now, index
    )
    return NodeLoadDetail(explanation, state.thresholds.profile(index), state.resources)


def state_at(plugin: LoadAwareScheduling, snapshot: Snapshot, now: datetime) -> LoadAwareState:
    """The plugin's state for ``snapshot`` at ``now`` (shared with evaluations of the same
    args), for a question about the nodes rather than a pod."""
    return plugin.state(Cycle(parse_pod(_PROBE), snapshot, now))


def adds_nothing(state: LoadAwareState) -> IncomingPod:
    """An incoming pod that adds nothing: the nodes as they stand."""
    return IncomingPod(np.zeros(len(state.resources), dtype=np.int64), "", daemonset=False)


def _measured(state: LoadAwareState, plan: FilterPlan, total: IntArray) -> IntArray:
    """The NodeMetric's usage of the kind each node is judged by (no estimates)."""
    measured: IntArray = np.zeros_like(total)
    for kind, members in plan.kinds:
        usage_of_kind = base_usage(kind, state.metrics, state.cache)
        measured = np.where(members, usage_of_kind.measured, measured)
    return measured


def _resource(
    state: LoadAwareState,
    limits: IntArray,
    measured: IntArray,
    total: IntArray,
    k: int,
    i: int,
    usable: bool,
) -> ResourceLoad:
    alloc = int(state.allocatable[k, i])
    return ResourceLoad(
        measured=_percent(int(measured[k, i]), alloc) if usable else None,
        total=_percent(int(total[k, i]), alloc) if usable else None,
        threshold=int(limits[k, i]),
        allocatable=alloc,
    )


def _percent(used: int, total: int) -> int | None:
    """The plugin's ``round(float64(used) / float64(total) * 100)``; None without allocatable."""
    if total == 0:
        return None
    return int(go_round(float(used) / float(total) * 100))


def _args_in_force(plugin: LoadAwareScheduling, state: LoadAwareState) -> ArgsInForce:
    args, base = plugin.config, state.thresholds.base
    aggregated = None
    if base.aggregated is not None:
        agg = base.aggregated
        values = ", ".join(
            f"{name} {value}%"
            for name, value in zip(state.resources, agg.thresholds, strict=True)
            if value
        )
        aggregated = f"{values} on {agg.kind}"
    return ArgsInForce(
        thresholds=dict(zip(state.resources, base.usage, strict=True)),
        prod_thresholds={
            name: value for name, value in zip(state.resources, base.prod, strict=True) if value
        },
        aggregated=aggregated,
        expiration_seconds=args.node_metric_expiration_seconds,
        filter_expired=bool(args.filter_expired_node_metrics),
        schedule_when_expired=args.enable_schedule_when_node_metrics_expired,
    )
