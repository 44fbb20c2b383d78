"""A page of a decision's explanation made straight from the engine's :class:`Decision`: the
same page :func:`scoring.decision_codec.select_in` cuts from the whole explanation, without
making every node's entry (on 5,000 nodes, most of the cost of answering an evaluation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from scoring.decision import Decision
from scoring.decision_codec import NodeSelection, select_nodes


@dataclass(frozen=True)
class DecisionPage:
    """The explanation with only the selected nodes in ``nodes``, what was selected, and every
    node's name in the explanation's order."""

    explanation: dict[str, Any]
    selection: NodeSelection
    names: list[str]


def page(decision: Decision, offset: int | None = None, limit: int | None = None) -> DecisionPage:
    """Nodes ``offset … offset + limit`` of ``decision.to_dict()`` (the default page without
    either), with its other fields."""
    order = decision.node_order()
    passed = np.ones(len(order), dtype=bool)
    for outcome in decision.filters:
        passed &= outcome.result.passed
    feasible = passed[order].tolist() if order else []

    def filters_of(positions: list[int]) -> list[Any]:
        return [decision.node_entry(order[k], explain=False)["filters"] for k in positions]

    selection = select_nodes(feasible, filters_of, offset, limit)
    nodes = [decision.node_entry(order[k]) for k in selection.positions]
    names = decision.cycle.snapshot.node_names
    return DecisionPage(decision.header(nodes), selection, [names[i] for i in order])
