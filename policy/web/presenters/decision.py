"""A decision (the engine contract's JSON) laid out for a page of any cluster size: the winner,
the best N ranked nodes with every score plugin's raw, normalized and weighted score, and the
filtered nodes grouped by plugin and reason, a few of each shown and the rest one click away."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from policy.web.presenters.explain import loadaware_summary
from scoring.plugins.loadaware.args import PLUGIN_NAME as LOADAWARE

TOP_RANKED = 10
GROUP_PREVIEW = 5


@dataclass(frozen=True)
class ScoreCell:
    raw: int
    normalized: int
    weight: int
    weighted: int


@dataclass(frozen=True)
class RankedNode:
    rank: int
    name: str
    total: int | None
    scores: list[ScoreCell | None]
    loadaware: str


@dataclass(frozen=True)
class Failure:
    plugin: str
    code: str
    reason: str


@dataclass(frozen=True)
class FilteredNode:
    name: str
    failures: list[Failure]
    loadaware: str


@dataclass
class FilterGroup:
    """Nodes that one filter plugin rejected with one reason."""

    number: int
    plugin: str
    code: str
    reason: str
    nodes: list[FilteredNode] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.nodes)

    @property
    def preview(self) -> list[FilteredNode]:
        return self.nodes[:GROUP_PREVIEW]


@dataclass(frozen=True)
class DecisionView:
    pod: str
    profile: str
    selected: str | None
    message: str
    error: str
    feasible: int
    total: int
    score_plugins: list[tuple[str, int]]  # (plugin, weight)
    winner: RankedNode | None
    ranked: list[RankedNode]  # every feasible node, best first
    groups: list[FilterGroup]
    skipped: list[Mapping[str, Any]]
    filter_plugins: list[str]
    # Score plugins the engine does not model, with weight: the cluster may rank differently.
    ranking_may_differ_because: list[str] = field(default_factory=list)

    @property
    def filtered(self) -> int:
        return self.total - self.feasible

    @property
    def has_loadaware(self) -> bool:
        """Whether LoadAware explained the ranked nodes (it is in the profile)."""
        return any(node.loadaware for node in self.ranked[:TOP_RANKED])

    @property
    def winner_parts(self) -> list[tuple[str, int, ScoreCell | None]]:
        """(plugin, weight, score) of the winner, one per score plugin."""
        if self.winner is None:
            return []
        return [
            (plugin, weight, cell)
            for (plugin, weight), cell in zip(self.score_plugins, self.winner.scores, strict=True)
        ]


def _failures(entry: Mapping[str, Any]) -> list[Failure]:
    out: list[Failure] = []
    for f in entry.get("filters") or []:
        if f.get("code") == "Success":
            continue
        reasons = f.get("reasons") or [f.get("reason") or ""]
        out.extend(Failure(str(f.get("plugin")), str(f.get("code")), str(r)) for r in reasons)
    return out


def decision_view(explanation: Mapping[str, Any]) -> DecisionView:
    """Lay out the contract JSON (nodes come ranked feasible first, then infeasible by name)."""
    nodes: Sequence[Mapping[str, Any]] = explanation.get("nodes") or []
    plugins: list[tuple[str, int]] = []
    filter_plugins: list[str] = []
    for entry in nodes:
        if entry.get("feasible") and entry.get("scores"):
            plugins = [(str(s["plugin"]), int(s["weight"])) for s in entry["scores"]]
            break
    if nodes:
        filter_plugins = [str(f.get("plugin")) for f in nodes[0].get("filters") or []]
    names = [name for name, _ in plugins]
    ranked: list[RankedNode] = []
    groups: dict[tuple[str, str, str], FilterGroup] = {}
    for entry in nodes:
        name = str(entry.get("name"))
        if entry.get("feasible"):
            by_plugin = {s["plugin"]: s for s in entry.get("scores") or []}
            cells = [
                ScoreCell(s["raw"], s["normalized"], s["weight"], s["weighted"])
                if (s := by_plugin.get(plugin))
                else None
                for plugin in names
            ]
            ranked.append(
                RankedNode(
                    rank=len(ranked) + 1,
                    name=name,
                    total=entry.get("totalScore"),
                    scores=cells,
                    loadaware=loadaware_summary(entry.get("details")),
                )
            )
            continue
        failures = _failures(entry)
        filtered = FilteredNode(name, failures, _filtered_loadaware(entry, failures))
        for failure in failures:
            key = (failure.plugin, failure.code, failure.reason)
            group = groups.get(key)
            if group is None:
                group = groups[key] = FilterGroup(0, *key)
            group.nodes.append(filtered)
    ordered = sorted(groups.values(), key=lambda g: (-g.count, g.plugin, g.reason))
    for number, group in enumerate(ordered, start=1):
        group.number = number
    selected = explanation.get("selectedNode")
    winner = ranked[0] if ranked and ranked[0].name == selected else None
    return DecisionView(
        pod=str(explanation.get("pod", "")),
        profile=str(explanation.get("profile", "")),
        selected=selected,
        message=str(explanation.get("message") or ""),
        error=str(explanation.get("error") or ""),
        feasible=int(explanation.get("feasibleNodes", len(ranked))),
        total=int(explanation.get("totalNodes", len(nodes))),
        score_plugins=plugins,
        winner=winner,
        ranked=ranked,
        groups=ordered,
        skipped=list(explanation.get("skippedPlugins") or []),
        filter_plugins=filter_plugins,
        ranking_may_differ_because=[
            str(name) for name in explanation.get("rankingMayDifferBecause") or []
        ]
        if explanation.get("rankingMayDiffer")
        else [],
    )


def _filtered_loadaware(entry: Mapping[str, Any], failures: list[Failure]) -> str:
    """LoadAware's one-line arithmetic, shown for nodes LoadAware rejected."""
    if any(f.plugin == LOADAWARE for f in failures):
        return loadaware_summary(entry.get("details"))
    return ""
