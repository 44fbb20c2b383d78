"""``NodeResourceTopologyMatch``: NUMA-aware Filter and Score over NodeResourceTopology data.

Upstream: kubernetes-sigs/scheduler-plugins pkg/noderesourcetopology (plugin.go, filter.go,
score.go, least_numa.go). A node without an NRT object passes Filter and scores 0; a
non-Guaranteed pod scores 100 everywhere. Filter and Score run once per group of nodes with
identical NUMA data (see ``state``); results are spread to nodes with numpy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from scoring.columnar.values import Interleave, Plain, Table, Values
from scoring.framework import MAX_NODE_SCORE, SUCCESS, Cycle, FilterResult, Plugin, Status
from scoring.plugins.nrt.args import LEAST_NUMA_NODES
from scoring.plugins.nrt.explain import (
    EXEMPT,
    NON_GUARANTEED,
    WITHOUT_TOPOLOGY,
    NodeContext,
    Seen,
    explain_node,
)
from scoring.plugins.nrt.filter import admit
from scoring.plugins.nrt.least_numa import least_numa_score
from scoring.plugins.nrt.resources import PodNumaView
from scoring.plugins.nrt.score import allocation_score, resource_weights, strategy_function
from scoring.plugins.nrt.state import TopologyState, accounting_mode, subset_groups
from scoring.plugins.nrt.topology import SINGLE_NUMA_NODE, NodeNuma
from scoring.snapshot import NODE_EVENT, POD_EVENT, TOPOLOGY_EVENT, IntArray, Snapshot

BEST_EFFORT = "BestEffort"
FILTER_SEEN = "NodeResourceTopologyMatch/filter"
SCORE_SEEN = "NodeResourceTopologyMatch/score"
# Score groups only the feasible nodes when they are fewer than 1/SUBSET_SHARE of the cluster
# (e.g. a cache recomputing a few nodes): cheaper than regrouping every node.
SUBSET_SHARE = 8


class NodeResourceTopologyMatch(Plugin):
    """Filter: can a single NUMA cell host the pod (or each container)? Score: how well?"""

    name = "NodeResourceTopologyMatch"
    # Reserve feeds the NRT cache upstream; here the snapshot listener in ``state`` does it.
    points = frozenset({"preFilter", "filter", "score", "reserve"})
    depends_on = frozenset({POD_EVENT, NODE_EVENT, TOPOLOGY_EVENT})

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__(args)
        strategy: Mapping[str, Any] = args.get("scoringStrategy") or {}
        self.strategy = str(strategy.get("type") or "LeastAllocated")
        self.weights = resource_weights(strategy.get("resources") or ())
        self.mode = accounting_mode(args)

    # -- shared per-cycle data -----------------------------------------------------------------

    def state(self, snapshot: Snapshot) -> TopologyState:
        return snapshot.extension(f"nrt.state.{self.mode}", lambda s: TopologyState(s, self.mode))

    def pod_view(self, cycle: Cycle) -> PodNumaView:
        key = f"{self.name}/pod"
        if key not in cycle.state:
            cycle.state[key] = PodNumaView.of(cycle.pod)
        view: PodNumaView = cycle.state[key]
        return view

    def _exempt(self, pod: PodNumaView) -> bool:
        """A BestEffort pod asking only for native resources needs no NUMA alignment."""
        return pod.qos == BEST_EFFORT and not pod.non_native

    # -- Filter ----------------------------------------------------------------------------------

    def filter(self, cycle: Cycle) -> FilterResult:
        n = len(cycle.snapshot)
        pod = self.pod_view(cycle)
        if self._exempt(pod):
            cycle.state[FILTER_SEEN] = EXEMPT
            return FilterResult.success(n)
        group_ids, groups = self.state(cycle.snapshot).grouping()
        admissions = [admit(numa, pod) for numa in groups]
        cycle.state[FILTER_SEEN] = Seen(group_ids, groups, admissions)
        statuses: list[Status] = []
        per_group = np.full(len(groups) + 1, -1, dtype=np.int32)  # last slot: no NRT data
        for k, admission in enumerate(admissions):
            if not admission.status.ok:
                per_group[k] = len(statuses)
                statuses.append(admission.status)
        return FilterResult(per_group[group_ids], statuses)

    def filter_nodes(self, cycle: Cycle, nodes: IntArray) -> FilterResult:
        """Filter on a few nodes, grouped among themselves (no cluster-wide regrouping)."""
        pod = self.pod_view(cycle)
        if self._exempt(pod):
            return FilterResult.success(len(nodes))
        group_ids, groups = subset_groups(self.state(cycle.snapshot), nodes)
        statuses = [admit(numa, pod).status for numa in groups]
        return FilterResult.from_statuses(
            SUCCESS if k < 0 else statuses[k] for k in group_ids.tolist()
        )

    # -- Score -----------------------------------------------------------------------------------

    def score(self, cycle: Cycle, feasible: IntArray) -> IntArray:
        pod = self.pod_view(cycle)
        if not pod.guaranteed:
            cycle.state[SCORE_SEEN] = NON_GUARANTEED
            return np.full(len(feasible), MAX_NODE_SCORE, dtype=np.int64)
        state = self.state(cycle.snapshot)
        if len(feasible) * SUBSET_SHARE < len(cycle.snapshot):
            local_ids, groups = subset_groups(state, feasible)
            group_ids = np.full(len(cycle.snapshot), -1, dtype=np.int32)
            group_ids[feasible] = local_ids
        else:
            group_ids, groups = state.grouping()
        results = [self._score_group(numa, pod) for numa in groups]
        cycle.state[SCORE_SEEN] = Seen(group_ids, groups, results)
        per_group = np.array([*(r[0] for r in results), 0], dtype=np.int64)
        scores: IntArray = per_group[group_ids[feasible]]
        return scores

    def _score_group(self, numa: NodeNuma, pod: PodNumaView) -> tuple[int, Any]:
        if self.strategy == LEAST_NUMA_NODES:
            result = least_numa_score(numa, pod)
            return result.score, result
        if numa.manager.policy != SINGLE_NUMA_NODE:
            return 0, None
        strategy = strategy_function(self.strategy)
        return allocation_score(numa, pod, strategy, self.weights)

    # -- Explanation -------------------------------------------------------------------------------

    def explain_columns(self, cycle: Cycle, nodes: IntArray) -> Values:
        """Nodes without a topology share one detail; the others are explained one by one."""
        state = self.state(cycle.snapshot)
        bare = np.array(
            [state.topologies[i] is None or state.numa(i) is None for i in nodes.tolist()],
            dtype=bool,
        )
        rest = np.flatnonzero(~bare)
        details = [self.explain(cycle, node) for node in nodes[rest].tolist()]
        return Interleave(
            len(nodes),
            [
                (np.flatnonzero(bare), Table.constant(dict(WITHOUT_TOPOLOGY), int(bare.sum()))),
                (rest, Plain([dict(d) if d else None for d in details])),
            ],
        )

    def explain(self, cycle: Cycle, node: int) -> Mapping[str, Any] | None:
        state = self.state(cycle.snapshot)
        pod = self.pod_view(cycle)
        context = NodeContext(
            topology=state.topologies[node],
            current=state.numa(node),
            mode=self.mode,
            strategy=self.strategy,
            pod=pod,
            exempt=cycle.state.get(FILTER_SEEN) == EXEMPT,
            filtered=_seen(cycle, FILTER_SEEN),
            scored=cycle.state.get(SCORE_SEEN),
        )
        return explain_node(node, context)


def _seen(cycle: Cycle, key: str) -> Seen | None:
    value = cycle.state.get(key)
    return value if isinstance(value, Seen) else None
