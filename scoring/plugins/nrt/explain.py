"""Human-readable detail behind NodeResourceTopologyMatch verdicts on one node.

Shows the topology manager configuration and where it came from, the NUMA cells as the plugin
saw them, which cell each container would use (or which request no cell can host, with every
cell's amount of it), and how the score was reached.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from scoring.plugins.nrt.filter import Admission, Placement
from scoring.plugins.nrt.least_numa import LeastNumaResult
from scoring.plugins.nrt.resources import PodNumaView
from scoring.plugins.nrt.topology import SINGLE_NUMA_NODE, NodeNuma, NodeTopology
from scoring.quantity import format_amount

NON_GUARANTEED = "non-guaranteed"
EXEMPT = "exempt"  # Filter skipped the NUMA check (BestEffort, native resources only)


@dataclass(frozen=True)
class Seen:
    """What one extension point saw in a cycle: node → group id, the groups, one result each."""

    group_ids: npt.NDArray[np.int32]
    groups: list[NodeNuma]
    results: list[Any]

    def at(self, node: int) -> tuple[NodeNuma, Any] | None:
        group = int(self.group_ids[node])
        return None if group < 0 else (self.groups[group], self.results[group])


@dataclass(frozen=True)
class NodeContext:
    """Everything known about one node in one cycle."""

    topology: NodeTopology | None
    current: NodeNuma | None
    mode: str
    strategy: str
    pod: PodNumaView
    exempt: bool
    filtered: Seen | None
    scored: Seen | str | None


# The detail of a node without a NodeResourceTopology (most nodes of most clusters).
WITHOUT_TOPOLOGY: Mapping[str, Any] = {
    "topology": None,
    "summary": "no NodeResourceTopology for this node: Filter admits it, Score gives 0",
}


def explain_node(node: int, context: NodeContext) -> dict[str, Any]:
    topology = context.topology
    if topology is None or context.current is None:
        return dict(WITHOUT_TOPOLOGY)
    manager = topology.manager
    filtered = context.filtered.at(node) if context.filtered else None
    numa = filtered[0] if filtered else context.current
    out: dict[str, Any] = {
        "topology": {
            "apiVersion": topology.api_version,
            "policy": manager.policy,
            "scope": manager.scope,
            "maxNUMANodes": manager.max_numa_nodes,
            "policyFrom": manager.source,
        },
        "accounting": context.mode,
        "numaCells": [_cell(cell.id, cell.zone, cell.available) for cell in numa.cells],
    }
    if topology.ignored_zones:
        out["ignoredZones"] = list(topology.ignored_zones)
    if context.exempt:
        out["filter"] = "admitted: BestEffort pod requesting only native resources"
    elif filtered is not None:
        out["filter"] = _filter_detail(filtered[0], filtered[1])
    score = _score_detail(node, context)
    if score is not None:
        out["score"] = score
    return out


def _cell(cell_id: int, zone: str, available: Mapping[str, int]) -> dict[str, Any]:
    amounts = {name: format_amount(name, amount) for name, amount in sorted(available.items())}
    return {"id": cell_id, "zone": zone, "available": amounts}


def _filter_detail(numa: NodeNuma, admission: Admission) -> dict[str, Any] | str:
    if numa.manager.policy != SINGLE_NUMA_NODE:
        return f"admitted: policy {numa.manager.policy} is not checked (only single-numa-node)"
    detail: dict[str, Any] = {
        "verdict": admission.status.message or "admitted",
        "placements": [_placement(numa, p) for p in admission.placements],
    }
    return detail


def _placement(numa: NodeNuma, placement: Placement) -> dict[str, Any]:
    entry: dict[str, Any] = {"container": placement.container or "(pod)", "kind": placement.kind}
    choice = placement.choice
    if choice.cell is not None:
        entry["numaCell"] = choice.cell
        return entry
    name = choice.resource or ""
    entry["failedResource"] = name
    if choice.missing_at_node_level:
        entry["reason"] = f"the node does not report {name} at all"
        return entry
    entry["reason"] = "no NUMA cell can host every request together"
    entry["cellsPerRequest"] = {r: list(ids) for r, ids in choice.candidates.items()}
    entry["cellAmounts"] = {
        str(cell.id): format_amount(name, free[name]) if name in free else None
        for cell, free in zip(numa.cells, placement.seen, strict=True)
    }
    return entry


def _score_detail(node: int, context: NodeContext) -> dict[str, Any] | None:
    scored = context.scored
    if scored is None:
        return None
    if isinstance(scored, str):
        return {"strategy": context.strategy, "score": 100, "reason": "pod is not Guaranteed"}
    seen = scored.at(node)
    if seen is None:
        return None
    numa, (value, detail) = seen
    out: dict[str, Any] = {"strategy": context.strategy, "score": value}
    if isinstance(detail, LeastNumaResult):
        out["containers"] = [_least_numa_row(name, needed) for name, needed in detail.rows]
    elif detail is None:
        out["reason"] = f"policy {numa.manager.policy}: only single-numa-node nodes are scored"
    else:
        out["containers"] = [_allocation_row(numa, row) for row in detail]
        out["rule"] = "each container keeps its smallest non-zero cell score; the node the mean"
    return out


def _least_numa_row(name: str, needed: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"container": name or "(pod)"}
    if needed is None:
        row["fits"] = False
    else:
        row["numaCells"] = list(needed.ids)
        row["minimalDistance"] = needed.optimal
    return row


def _allocation_row(numa: NodeNuma, row: tuple[str, Sequence[int], int]) -> dict[str, Any]:
    name, scores, best = row
    per_cell = {str(cell.id): score for cell, score in zip(numa.cells, scores, strict=True)}
    return {"container": name or "(pod)", "cellScores": per_cell, "score": best}
