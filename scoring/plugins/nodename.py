"""NodeName (in-tree, Kubernetes 1.35 semantics).

Upstream: pkg/scheduler/framework/plugins/nodename/node_name.go. A pod whose ``spec.nodeName``
is set fits only that node; every other node fails UnschedulableAndUnresolvable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from scoring.columnar.values import Table, Values
from scoring.framework import Cycle, FilterResult, Plugin, unresolvable
from scoring.snapshot import IntArray

REASON = "node(s) didn't match the requested node name"


class NodeName(Plugin):
    """Honour ``spec.nodeName``."""

    name = "NodeName"
    points = frozenset({"filter"})
    depends_on: ClassVar[frozenset[str]] = frozenset()  # node names never change

    def filter(self, cycle: Cycle) -> FilterResult:
        snapshot = cycle.snapshot
        wanted = cycle.pod.node_name
        if not wanted:
            return FilterResult.success(len(snapshot))
        other = np.ones(len(snapshot), dtype=bool)
        index = snapshot.index.get(wanted)
        if index is not None:
            other[index] = False
        return FilterResult.from_masks(len(snapshot), [(other, unresolvable(REASON))])

    def explain_columns(self, cycle: Cycle, nodes: IntArray) -> Values:
        wanted = cycle.pod.node_name
        return Table.constant({"requestedNodeName": wanted} if wanted else None, len(nodes))

    def explain(self, cycle: Cycle, node: int) -> Mapping[str, Any] | None:
        wanted = cycle.pod.node_name
        return {"requestedNodeName": wanted} if wanted else None
