"""A placement decision and its explanation, serialized to the engine contract's JSON.

The decision keeps the vectorized results (one array per plugin); per-node dictionaries are
built only when serialized, so evaluating a pod over thousands of nodes stays cheap.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from scoring.framework import SUCCESS, Code, Cycle, FilterResult, Plugin, Status
from scoring.snapshot import IntArray


@dataclass(frozen=True)
class FilterOutcome:
    plugin: str
    result: FilterResult


@dataclass(frozen=True)
class ScoreOutcome:
    """One score plugin over the feasible nodes (arrays aligned with ``Decision.feasible``)."""

    plugin: str
    raw: IntArray
    normalized: IntArray
    weight: int

    @property
    def weighted(self) -> IntArray:
        result: IntArray = self.normalized * self.weight
        return result


@dataclass(frozen=True)
class SkippedPlugin:
    """A plugin the profile enables and the engine does not model: the extension points it is
    enabled at (of those the engine runs) and its effective score weight (None when not a score
    plugin)."""

    plugin: str
    reason: str
    extension_points: tuple[str, ...] = ()
    weight: int | None = None
    constant_score: bool = False

    @property
    def may_rank(self) -> bool:
        """Whether upstream's weighted score of this plugin could differ between nodes."""
        return self.weight is not None and self.weight != 0 and not self.constant_score

    def to_dict(self) -> dict[str, Any]:
        return {
            "plugin": self.plugin,
            "reason": self.reason,
            "extensionPoints": list(self.extension_points),
            "weight": self.weight,
            "status": "not modeled",
        }


@dataclass(frozen=True)
class Comparison:
    """The engine's decision beside where a scheduler really put the pod. ``agrees``: the
    node is among the engine's top-scored ties (kube-scheduler picks one of them at random,
    ``selectHost``); else ``rank`` (1 = best; None when the engine filtered the node out) and
    ``gap``, the best total minus the node's."""

    agrees: bool
    rank: int | None
    gap: int | None


@dataclass
class Decision:
    cycle: Cycle
    profile: str
    filters: list[FilterOutcome]
    feasible: IntArray
    scores: list[ScoreOutcome]
    error: str | None = None
    skipped: list[SkippedPlugin] = field(default_factory=list)
    plugins: Mapping[str, Plugin] = field(default_factory=dict)
    # Score plugins whose PreScore returned Skip for this pod (upstream runs no Score for them),
    # with their weights, in the profile's order.
    pre_score_skipped: list[tuple[str, int]] = field(default_factory=list)

    @property
    def unmodeled_scorers(self) -> list[str]:
        """Skipped score plugins: each adds ``weight * score`` upstream that the totals lack."""
        return [s.plugin for s in self.skipped if s.may_rank]

    @property
    def ranking_may_differ(self) -> bool:
        """Whether a skipped score plugin could reorder the feasible nodes (two or more)."""
        return bool(self.unmodeled_scorers) and len(self.feasible) > 1

    @cached_property
    def totals(self) -> IntArray:
        total = np.zeros(len(self.feasible), dtype=np.int64)
        for outcome in self.scores:
            total += outcome.weighted
        return total

    @cached_property
    def _total_list(self) -> list[int]:
        totals: list[int] = self.totals.tolist()
        return totals

    @cached_property
    def positions(self) -> dict[int, int]:
        """Node index → position in ``feasible`` (and in every score array)."""
        return {int(node): k for k, node in enumerate(self.feasible)}

    @cached_property
    def ranking(self) -> list[int]:
        """Feasible node indices, best first: highest total, then name."""
        feasible = np.asarray(self.feasible, dtype=np.int64)
        names = self.cycle.snapshot.name_rank()[feasible]
        ranked: list[int] = feasible[np.lexsort((names, -self.totals))].tolist()
        return ranked

    @cached_property
    def selected_index(self) -> int | None:
        """``ranking[0]`` without sorting every node: the highest total, then the first name."""
        if self.error is not None or len(self.feasible) == 0:
            return None
        best = self.feasible[self.totals == self.totals.max()].tolist()
        return int(min(best, key=self.cycle.snapshot.node_names.__getitem__))

    def compare(self, actual: str) -> Comparison:
        """How this decision compares with the scheduler's choice of node ``actual``."""
        index = self.cycle.snapshot.index.get(actual)
        position = None if index is None else self.positions.get(index)
        if self.error is not None or position is None:
            return Comparison(False, None, None)
        best, score = int(self.totals.max()), int(self.totals[position])
        rank = 1 + int((self.totals > score).sum())
        return Comparison(score == best, rank, best - score)

    @property
    def selected_node(self) -> str | None:
        index = self.selected_index
        return None if index is None else self.cycle.snapshot.node_names[index]

    def reason_counts(self) -> Counter[str]:
        """Failure reasons as kube-scheduler counts them: each node's first failing filter."""
        counts: Counter[str] = Counter()
        first_failure = np.full(len(self.cycle.snapshot), -1, dtype=np.int64)
        for k, outcome in enumerate(self.filters):
            fresh = ~outcome.result.passed & (first_failure < 0)
            first_failure[fresh] = k
        for k, outcome in enumerate(self.filters):
            ids = outcome.result.status_ids[first_failure == k]
            for status_id, count in zip(*np.unique(ids, return_counts=True), strict=True):
                for reason in outcome.result.statuses[int(status_id)].reasons:
                    counts[reason] += int(count)
        return counts

    def summary(self) -> str | None:
        """``FitError.Error()``: "0/N nodes are available: 3 Insufficient cpu, …." or None."""
        if self.selected_index is not None:
            return None
        if self.error is not None:
            return self.error
        counts = self.reason_counts()
        histogram = sorted(f"{count} {reason}" for reason, count in counts.items())
        total = len(self.cycle.snapshot)
        return f"0/{total} nodes are available: {', '.join(histogram)}."

    # -- serialization -------------------------------------------------------------------------

    @cached_property
    def _filter_rows(self) -> list[tuple[str, list[int], list[Status]]]:
        """Per filter plugin: its name, each node's status id, the statuses (as Python lists:
        serializing thousands of nodes reads them once per node)."""
        return [(o.plugin, o.result.status_ids.tolist(), o.result.statuses) for o in self.filters]

    @cached_property
    def _score_rows(self) -> list[tuple[str, list[int], list[int], int, list[int]]]:
        """Per score plugin, over the feasible nodes: name, raw, normalized, weight, weighted."""
        return [
            (s.plugin, s.raw.tolist(), s.normalized.tolist(), s.weight, s.weighted.tolist())
            for s in self.scores
        ]

    def node_entry(
        self, node: int, *, explain: bool = True, details: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The contract's per-node object (plus ``details`` from the plugins when asked, or
        as given: :func:`scoring.decision_page.page_details`)."""
        filters = []
        for plugin, ids, statuses in self._filter_rows:
            status = SUCCESS if ids[node] < 0 else statuses[ids[node]]
            entry: dict[str, Any] = {
                "plugin": plugin,
                "code": status.code.label,
                "reason": status.message,
            }
            if len(status.reasons) > 1:
                entry["reasons"] = list(status.reasons)
            filters.append(entry)
        feasible = all(f["code"] == Code.SUCCESS.label for f in filters)
        scores: list[dict[str, Any]] = []
        total: int | None = None
        k = self.positions.get(node)
        if feasible and k is not None:
            for plugin, raw, normalized, weight, weighted in self._score_rows:
                scores.append(
                    {
                        "plugin": plugin,
                        "raw": raw[k],
                        "normalized": normalized[k],
                        "weight": weight,
                        "weighted": weighted[k],
                    }
                )
            total = self._total_list[k]
        entry = {
            "name": self.cycle.snapshot.node_names[node],
            "feasible": feasible,
            "filters": filters,
            "scores": scores,
            "totalScore": total,
        }
        if explain:
            if details is None:
                details = self.details(node)
            if details:
                entry["details"] = details
        return entry

    def details(self, node: int) -> dict[str, Any]:
        out = {}
        for name, plugin in self.plugins.items():
            detail = plugin.explain(self.cycle, node)
            if detail:
                out[name] = dict(detail)
        return out

    def node_order(self) -> list[int]:
        """Ranked feasible nodes, then infeasible nodes by name."""
        return list(self._node_order)

    @cached_property
    def _node_order(self) -> list[int]:
        ranked = self.ranking
        by_name = self.cycle.snapshot.by_name()
        ranked_nodes = np.zeros(len(by_name), dtype=bool)
        ranked_nodes[ranked] = True
        rest: list[int] = by_name[~ranked_nodes[by_name]].tolist()
        return ranked + rest

    def to_dict(self, *, explain: bool = True) -> dict[str, Any]:
        """The JSON object of ``python -m scoring evaluate --format json``."""
        nodes = [self.node_entry(i, explain=explain) for i in self.node_order()]
        return self.header(nodes)

    def header(self, nodes: list[dict[str, Any]]) -> dict[str, Any]:
        """:meth:`to_dict` with ``nodes`` as its node list (a page of it, say)."""
        result: dict[str, Any] = {
            "pod": self.cycle.pod.key,
            "profile": self.profile,
            "selectedNode": self.selected_node,
            "feasibleNodes": len(self.feasible),
            "totalNodes": len(self.cycle.snapshot),
            "nodes": nodes,
            "skippedPlugins": [s.to_dict() for s in self.skipped],
            "rankingMayDiffer": self.ranking_may_differ,
            "rankingMayDifferBecause": self.unmodeled_scorers if self.ranking_may_differ else [],
        }
        if self.pre_score_skipped:
            result["preScoreSkipped"] = [
                {"plugin": plugin, "weight": weight} for plugin, weight in self.pre_score_skipped
            ]
        summary = self.summary()
        if summary is not None:
            result["message"] = summary
        if self.error is not None:
            result["error"] = self.error
        return result
