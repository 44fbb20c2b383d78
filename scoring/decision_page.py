"""A page of a decision's explanation made straight from the engine's :class:`Decision`: the
same page :func:`scoring.decision_codec.select_in` cuts from the whole explanation, without
making every node's entry (on 5,000 nodes, most of the cost of answering an evaluation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from scoring.decision import Decision
from scoring.decision_codec import FilteredGroup, NodeSelection, largest_first, select_grouped
from scoring.framework import Code


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
    filtered = [k for k, flag in enumerate(feasible) if not flag]
    groups = filtered_groups(decision, [order[k] for k in filtered], filtered)
    selection = select_grouped(feasible, groups, offset, limit)
    shown = [order[k] for k in selection.positions]
    nodes = [
        decision.node_entry(node, details=details)
        for node, details in zip(shown, page_details(decision, shown), strict=True)
    ]
    names = decision.cycle.snapshot.node_names
    return DecisionPage(decision.header(nodes), selection, [names[i] for i in order])


def page_details(decision: Decision, nodes: list[int]) -> list[dict[str, Any]]:
    """Each plugin's details of ``nodes``, as ``Decision.details`` gives them, from the
    plugins' columns: LoadAware's for a hundred nodes at once instead of node by node."""
    out: list[dict[str, Any]] = [{} for _ in nodes]
    if not nodes:
        return out
    rows = np.array(nodes, dtype=np.int64)
    for name, plugin in decision.plugins.items():
        column = plugin.explain_columns(decision.cycle, rows).tolist()
        for details, detail in zip(out, column, strict=True):
            if detail:
                details[name] = dict(detail)
    return out


Failure = tuple[str, str, str | None]  # (plugin, code, reason): a group's key, filter by filter


def filtered_groups(
    decision: Decision, nodes: list[int], positions: list[int]
) -> list[FilteredGroup]:
    """The groups :func:`scoring.decision_codec.select_nodes` makes of the filtered ``nodes``
    (at ``positions`` of the explanation), from the filters' status arrays: nodes whose
    failures read the same share a group, whatever status object each plugin gave them."""
    if not nodes:
        return []
    keys: list[list[Failure | None]] = []  # per filter: canonical failure per status id + 1
    columns = []
    for outcome in decision.filters:
        failures: list[Failure | None] = [None]  # status id -1: Success
        for status in outcome.result.statuses:
            ok = status.code == Code.SUCCESS
            failures.append(None if ok else (outcome.plugin, status.code.label, status.message))
        canonical = {failure: k for k, failure in enumerate(dict.fromkeys(failures))}
        lookup = np.array([canonical[failure] for failure in failures], dtype=np.int64)
        columns.append(lookup[outcome.result.status_ids[nodes] + 1])
        keys.append(list(canonical))
    rows, first, counts = np.unique(
        np.stack(columns), axis=1, return_index=True, return_counts=True
    )
    groups = []
    for column, start, count in zip(rows.T.tolist(), first.tolist(), counts.tolist(), strict=True):
        key = tuple(f for f in (keys[p][c] for p, c in enumerate(column)) if f is not None)
        groups.append(FilteredGroup(key, count, positions[start]))
    return largest_first(groups)
