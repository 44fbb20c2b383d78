"""A decision's node order, derived rather than stored.

The engine lists ranked nodes best first (highest total score, then name), then filtered
nodes by name (``Decision.node_order``). Stored by name instead, every decision on one
snapshot lists its nodes in the same order, so their per-node columns line up and a base
(``decision_codec.Base``) can share what they have in common; the order is rebuilt from each
node's ``feasible`` flag and ``totalScore``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

NODES = "nodes"


def explanation_order(feasible: Sequence[Any], totals: Sequence[Any]) -> list[int] | None:
    """Rows of nodes stored by name, in the engine's order: feasible rows by descending total
    (a stable sort keeps name order among ties), then the others. None when a feasible
    node's total is not a whole number."""
    ranked = [k for k, flag in enumerate(feasible) if flag is True]
    if any(type(totals[k]) is not int for k in ranked):
        return None
    ranked.sort(key=lambda k: -totals[k])
    return ranked + [k for k, flag in enumerate(feasible) if flag is not True]


def by_name(explanation: Mapping[str, Any]) -> dict[str, Any] | None:
    """The explanation with its nodes sorted by name, when :func:`explanation_order` gives
    back exactly its order; else None (the nodes are stored as they are)."""
    nodes = explanation.get(NODES)
    if not isinstance(nodes, list) or not all(isinstance(n, dict) for n in nodes):
        return None
    names = [n.get("name") for n in nodes]
    if not all(isinstance(name, str) for name in names):
        return None
    stored = sorted(nodes, key=lambda n: str(n["name"]))
    order = explanation_order(
        [n.get("feasible") for n in stored], [n.get("totalScore") for n in stored]
    )
    if order is None or any(
        stored[row] is not node for row, node in zip(order, nodes, strict=True)
    ):
        return None
    return {key: stored if key == NODES else value for key, value in explanation.items()}
