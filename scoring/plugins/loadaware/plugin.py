"""The ``LoadAwareScheduling`` engine plugin (Koordinator pkg/scheduler/plugins/loadaware).

Extension points: PreFilter (estimates the incoming pod once), Filter, Score (no NormalizeScore)
and Reserve. Reserve's accounting is the snapshot state's ``pod_added`` listener, which follows
``Snapshot.assume_pod`` / ``forget_pod`` like upstream's Reserve / Unreserve follow the cache.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from scoring.columnar.values import Values
from scoring.framework import CLOCK, SUCCESS, Cycle, FilterResult, Plugin, Status
from scoring.plugins.loadaware.args import PLUGIN_NAME, LoadAwareArgs
from scoring.plugins.loadaware.explain import explain_node
from scoring.plugins.loadaware.explain_columns import explain_columns
from scoring.plugins.loadaware.filter import filter_nodes
from scoring.plugins.loadaware.score import score_nodes
from scoring.plugins.loadaware.state import IncomingPod, LoadAwareState
from scoring.snapshot import NODE_EVENT, NODE_METRIC_EVENT, POD_EVENT, IntArray


class LoadAwareScheduling(Plugin):
    """Filter busy or stale nodes and prefer the least-used ones, by measured usage + estimates."""

    name = PLUGIN_NAME
    points = frozenset({"preFilter", "filter", "score", "reserve"})
    depends_on = frozenset({POD_EVENT, NODE_EVENT, NODE_METRIC_EVENT, CLOCK})

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__(args)
        self.config = LoadAwareArgs.from_v1(args)
        self.resources = self.config.resource_names
        self.weights = np.array(
            [self.config.resource_weights.get(name, 0) for name in self.resources], dtype=np.int64
        )
        self._key = f"{self.name}:{json.dumps(args, sort_keys=True, default=str)}"

    def state(self, cycle: Cycle) -> LoadAwareState:
        """The snapshot's state for these args, with its clock set to this cycle's now."""
        state = cycle.snapshot.extension(
            self._key, lambda snapshot: LoadAwareState(snapshot, self.config, cycle.now)
        )
        state.tick(cycle.now)
        return state

    def share_state(self, cycle: Cycle, base: LoadAwareScheduling) -> None:
        """Make this plugin's state on ``cycle``'s snapshot from ``base``'s when their args
        differ in usage thresholds only: a what-if of a threshold then reads no NodeMetric or
        pod again (a full build takes seconds on 5,000 nodes). Otherwise nothing is shared."""
        if self.resources != base.resources or _other_args(self.args) != _other_args(base.args):
            return
        shared = base.state(cycle)
        cycle.snapshot.extension(self._key, lambda _: shared.with_thresholds(self.config))

    def incoming(self, cycle: Cycle) -> IncomingPod:
        """The pod's estimate, computed once per cycle (upstream's PreFilter/CycleState)."""
        pod = cycle.state.get(self._key)
        if not isinstance(pod, IncomingPod):
            pod = cycle.state[self._key] = IncomingPod.of(cycle.pod, self.state(cycle))
        return pod

    def pre_filter(self, cycle: Cycle) -> Status:
        self.incoming(cycle)
        return SUCCESS

    def filter(self, cycle: Cycle) -> FilterResult:
        state = self.state(cycle)
        cycle.state[f"{self._key}:filtered"] = True
        return filter_nodes(self.config, state, self.incoming(cycle), cycle.now)

    def filter_nodes(self, cycle: Cycle, nodes: IntArray) -> FilterResult:
        return filter_nodes(self.config, self.state(cycle), self.incoming(cycle), cycle.now, nodes)

    def score(self, cycle: Cycle, feasible: IntArray) -> IntArray:
        state = self.state(cycle)
        pod = self.incoming(cycle)
        cycle.state[f"{self._key}:scored"] = True
        return score_nodes(self.config, self.weights, state, pod, cycle.now, feasible)

    def reserve(self, cycle: Cycle, node: int) -> Status:
        self.state(cycle)  # the listener has already accounted the pod (Snapshot.assume_pod)
        return SUCCESS

    def explain(self, cycle: Cycle, node: int) -> Mapping[str, Any]:
        state = self.state(cycle)
        return explain_node(
            self.config,
            self.weights,
            state,
            self.incoming(cycle),
            cycle.now,
            node,
            filtered=bool(cycle.state.get(f"{self._key}:filtered")),
            scored=bool(cycle.state.get(f"{self._key}:scored")),
        )

    def explain_columns(self, cycle: Cycle, nodes: IntArray) -> Values:
        return explain_columns(
            self.config,
            self.weights,
            self.state(cycle),
            self.incoming(cycle),
            cycle.now,
            nodes,
            filtered=bool(cycle.state.get(f"{self._key}:filtered")),
            scored=bool(cycle.state.get(f"{self._key}:scored")),
        )


def _other_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """The args but their usage thresholds (those only the thresholds part of the state reads)."""
    rest = {k: v for k, v in args.items() if k not in ("usageThresholds", "prodUsageThresholds")}
    aggregated = rest.get("aggregated")
    if isinstance(aggregated, Mapping):
        rest["aggregated"] = {k: v for k, v in aggregated.items() if k != "usageThresholds"}
    return rest
