"""A decision's explanation as columns (:mod:`scoring.columnar.values`), from its arrays.

``Decision.to_dict()`` builds one dict per node, which :func:`scoring.columnar.pack` then takes
apart into columns again: seconds on 5,000 nodes. Here the columns come straight from the
engine's arrays (statuses by index, scores by feasible position, each plugin's details from
its ``explain_columns``), and pack to the same bytes as ``pack([decision.to_dict()])`` (stored
by name when :func:`scoring.decision_order.by_name` would store it so).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scoring.columnar.format import DICT, INT, NULL
from scoring.columnar.values import Bools, Ints, Lists, Mixed, Plain, Records, Table, Values
from scoring.decision import Decision, FilterOutcome
from scoring.decision_order import NODES
from scoring.framework import Code, Status
from scoring.snapshot import IntArray

_NODE_KEYS = ("name", "feasible", "filters", "scores", "totalScore")
_SCORE_KEYS = ("plugin", "raw", "normalized", "weight", "weighted")


def explanation_columns(decision: Decision) -> tuple[Records, bool]:
    """The explanation (one row) by column, and whether its nodes are stored by name."""
    nodes = _Nodes(decision)
    header = decision.header([])
    fields: dict[str, Values] = {key: Plain([value]) for key, value in header.items()}
    fields[NODES] = Lists(np.array([len(nodes.rows)]), items=nodes.records())
    return Records(1, [tuple(header)], None, fields), nodes.by_name


def _status_entry(plugin: str, status: Status) -> dict[str, Any]:
    """A node's filter entry for ``status`` (as ``Decision.node_entry`` writes it)."""
    entry: dict[str, Any] = {"plugin": plugin, "code": status.code.label, "reason": status.message}
    if len(status.reasons) > 1:
        entry["reasons"] = list(status.reasons)
    return entry


class _Nodes:
    """A decision's nodes: which rows, in which order, and their columns."""

    def __init__(self, decision: Decision) -> None:
        self.decision = decision
        names = decision.cycle.snapshot.node_names
        count = len(names)
        passed = np.ones(count, dtype=bool)
        for outcome in decision.filters:
            passed &= _passed(outcome)
        self.passed = passed
        position = np.full(count, -1, dtype=np.int64)
        position[decision.feasible] = np.arange(len(decision.feasible))
        self.position = position
        # Scores and a total: feasible by every filter and among the scored (feasible) nodes.
        self.scored = passed & (position >= 0)
        by_name = decision.cycle.snapshot.by_name()
        order = _explanation_order(by_name, passed, self.scored, decision.totals, position)
        engine = np.array(decision.node_order(), dtype=np.int64)
        self.by_name = order is not None and np.array_equal(by_name[order], engine)
        self.rows: IntArray = by_name if self.by_name else engine

    def records(self) -> Records:
        rows = self.rows
        scored = self.scored[rows]
        fields: dict[str, Values] = {
            "name": Table(rows, self.decision.cycle.snapshot.node_names),
            "feasible": Bools(self.passed[rows]),
            "filters": self.filters(),
            "scores": self.scores(scored),
            "totalScore": Mixed(
                np.where(scored, INT, NULL),
                {INT: Ints(self.decision.totals[self.position[rows[scored]]])},
            ),
        }
        shapes: list[tuple[str, ...]] = [_NODE_KEYS]
        codes = None
        details = self.details()
        if details is not None:
            fields["details"], has = details
            shapes.append((*_NODE_KEYS, "details"))
            codes = has.astype(np.int64)
        return Records(len(rows), shapes, codes, fields)

    def filters(self) -> Lists:
        rows = self.rows
        positions: list[Values] = []
        for outcome in self.decision.filters:
            success = _status_entry(outcome.plugin, Status())
            table = [success, *(_status_entry(outcome.plugin, s) for s in outcome.result.statuses)]
            positions.append(Table(outcome.result.status_ids[rows].astype(np.int64) + 1, table))
        return Lists(np.full(len(rows), len(positions), dtype=np.int64), positions)

    def scores(self, scored: Any) -> Lists:
        at = self.position[self.rows[scored]]
        count = len(at)
        positions: list[Values] = []
        for outcome in self.decision.scores:
            fields: dict[str, Values] = {
                "plugin": Table.constant(outcome.plugin, count),
                "raw": Ints(outcome.raw[at]),
                "normalized": Ints(outcome.normalized[at]),
                "weight": Ints(np.full(count, outcome.weight, dtype=np.int64)),
                "weighted": Ints(outcome.weighted[at]),
            }
            positions.append(Records(count, [_SCORE_KEYS], None, fields))
        lengths = np.where(scored, len(positions), 0).astype(np.int64)
        return Lists(lengths, positions)

    def details(self) -> tuple[Records, Any] | None:
        """Each plugin's details of the rows (a dict per plugin that has any), and which rows
        have any; None when none has."""
        decision = self.decision
        columns: dict[str, Values] = {}
        present: list[Any] = []
        for name, plugin in decision.plugins.items():
            column = plugin.explain_columns(decision.cycle, self.rows)
            has = column.codes() == DICT
            if has.any():
                columns[name] = column.part(DICT)
                present.append(has)
        if not present:
            return None
        flags = np.stack(present)
        has_any = flags.any(axis=0)
        bits = (flags[:, has_any].astype(np.int64) << np.arange(len(present))[:, None]).sum(axis=0)
        kinds, codes = np.unique(bits, return_inverse=True)
        names = list(columns)
        shapes = [
            tuple(name for k, name in enumerate(names) if int(kind) >> k & 1)
            for kind in kinds.tolist()
        ]
        return Records(int(has_any.sum()), shapes, codes, columns), has_any


def _passed(outcome: FilterOutcome) -> Any:
    """Nodes whose status from this filter is a success."""
    result = outcome.result
    ok = np.array([s.code == Code.SUCCESS for s in result.statuses] + [True], dtype=bool)
    return ok[result.status_ids]  # -1 (success) picks the last


def _explanation_order(
    by_name: IntArray, passed: Any, scored: Any, totals: IntArray, position: IntArray
) -> IntArray | None:
    """:func:`scoring.decision_order.explanation_order` of the nodes stored by name: positions
    in ``by_name``, feasible ones by descending total (stable), then the others."""
    flags = passed[by_name]
    if (flags & ~scored[by_name]).any():
        return None  # a feasible node without a total
    ranked = np.flatnonzero(flags)
    total = totals[position[by_name[ranked]]]
    ranked = ranked[np.argsort(-total, kind="stable")]
    return np.concatenate([ranked, np.flatnonzero(~flags)]).astype(np.int64)
