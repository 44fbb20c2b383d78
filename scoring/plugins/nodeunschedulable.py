"""NodeUnschedulable (in-tree, Kubernetes 1.35 semantics).

Upstream: pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go. A cordoned
node (``spec.unschedulable: true``) fails UnschedulableAndUnresolvable unless the pod tolerates
the ``node.kubernetes.io/unschedulable:NoSchedule`` taint, whether or not the node carries it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from scoring.columnar.values import Table, Values
from scoring.framework import Cycle, FilterResult, Plugin, unresolvable
from scoring.objects import Taint
from scoring.plugins.tainttoleration import tolerated
from scoring.snapshot import NODE_EVENT, IntArray

REASON = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")


class NodeUnschedulable(Plugin):
    """Keep pods off cordoned nodes unless they tolerate the unschedulable taint."""

    name = "NodeUnschedulable"
    points = frozenset({"filter"})
    depends_on = frozenset({NODE_EVENT})
    comparison_operators: ClassVar[bool] = False  # TaintTolerationComparisonOperators (alpha)

    def _tolerates(self, cycle: Cycle) -> bool:
        return tolerated(
            cycle.pod.tolerations,
            UNSCHEDULABLE_TAINT,
            comparison_operators=self.comparison_operators,
        )

    def filter(self, cycle: Cycle) -> FilterResult:
        snapshot = cycle.snapshot
        if self._tolerates(cycle):
            return FilterResult.success(len(snapshot))
        return FilterResult.from_masks(
            len(snapshot), [(snapshot.unschedulable, unresolvable(REASON))]
        )

    def explain_columns(self, cycle: Cycle, nodes: IntArray) -> Values:
        flags = cycle.snapshot.unschedulable[nodes].astype(np.int64)
        detail = {"unschedulable": True, "toleratesUnschedulableTaint": self._tolerates(cycle)}
        return Table(flags, [None, detail])

    def explain(self, cycle: Cycle, node: int) -> Mapping[str, Any] | None:
        if not cycle.snapshot.unschedulable[node]:
            return None
        return {"unschedulable": True, "toleratesUnschedulableTaint": self._tolerates(cycle)}
