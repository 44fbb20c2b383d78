"""A decision (the engine contract's JSON) laid out for a page of any cluster size: the winner,
the best N ranked nodes with every score plugin's raw, normalized and weighted score, and the
filtered nodes grouped by plugin and reason, a few of each shown and the rest one click away."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from policy.web.presenters.explain import loadaware_summary
from scoring import LOADAWARE
from scoring import NODE_AFFINITY_POD_REASON as NODE_AFFINITY_REASON

TOP_RANKED = 10
GROUP_PREVIEW = 5
# Groups this small are open on the page, besides the largest one.
OPEN_GROUP_SIZE = 3
# Label values named per key in a node affinity group; the rest are counted together.
TOP_VALUES = 4
NODE_AFFINITY = "NodeAffinity"

# Why upstream's PreScore returns Skip for a score plugin, so that its Score does not run for
# the pod (pkg/scheduler/framework/runtime: RunPreScorePlugins records the skipped plugins).
PRE_SCORE_SKIP_REASONS = {
    "NodeAffinity": "the pod has no preferred node affinity terms, and the profile adds none",
    "PodTopologySpread": "no ScheduleAnyway spread constraint applies: the pod has none and "
    "the default constraints select none for it (they need a Service, ReplicaSet, "
    "StatefulSet or ReplicationController selecting the pod)",
    "InterPodAffinity": "no pod affinity or anti-affinity term counts for the score: the pod "
    "has no preferred terms, and no existing pod's terms that count match it (the profile may "
    "ignore existing pods' preferred terms)",
    "NodeResourcesBalancedAllocation": "the pod requests none of the balanced resources "
    "(a best-effort pod)",
}


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
    plugins: tuple[str, ...] = ()  # the score plugins, in the order of ``scores``

    @property
    def parts(self) -> list[tuple[str, ScoreCell | None]]:
        """(plugin, score): the breakdown shown when the row is expanded."""
        return list(zip(self.plugins, self.scores, strict=True))


@dataclass(frozen=True)
class PluginDelta:
    """One score plugin's part in #1's margin over #2 (weighted points; None: it did not score)."""

    plugin: str
    weight: int
    first: ScoreCell | None
    second: ScoreCell | None

    @property
    def words(self) -> list[str]:
        return camel_words(self.plugin)

    @property
    def delta(self) -> int:
        return (self.first.weighted if self.first else 0) - (
            self.second.weighted if self.second else 0
        )


@dataclass(frozen=True)
class Margin:
    """Why the best ranked node beat the second: the total gap and each plugin's share of it,
    largest first (plugins scoring both alike last)."""

    first: RankedNode
    second: RankedNode
    parts: list[PluginDelta]

    @property
    def gap(self) -> int:
        return (self.first.total or 0) - (self.second.total or 0)

    @property
    def deciding(self) -> list[PluginDelta]:
        """The plugins that scored the two differently."""
        return [part for part in self.parts if part.delta]


def margin_of(ranked: Sequence[RankedNode], plugins: Sequence[tuple[str, int]]) -> Margin | None:
    """#1 against #2 per score plugin (None with fewer than two ranked nodes)."""
    if len(ranked) < 2:
        return None
    first, second = ranked[0], ranked[1]
    parts = [
        PluginDelta(plugin, weight, a, b)
        for (plugin, weight), a, b in zip(plugins, first.scores, second.scores, strict=True)
    ]
    parts.sort(key=lambda part: (-abs(part.delta), part.plugin))
    return Margin(first, second, parts)


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
    """Nodes that one filter plugin rejected with one reason, whatever the result code (the
    codes and their node counts are kept: Unschedulable, UnschedulableAndUnresolvable)."""

    number: int
    plugin: str
    reason: str
    nodes: list[FilteredNode] = field(default_factory=list)
    codes: Counter[str] = field(default_factory=Counter)
    open: bool = False  # shown open on the page: the largest group, and the small ones
    # What the nodes lack, e.g. "needs disktype=ssd; these nodes have disktype=hdd (12)".
    hints: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.nodes)

    @property
    def preview(self) -> list[FilteredNode]:
        return self.nodes[:GROUP_PREVIEW]

    @property
    def code_counts(self) -> list[tuple[str, int]]:
        """(code, nodes) by most nodes first."""
        return sorted(self.codes.items(), key=lambda item: (-item[1], item[0]))


@dataclass(frozen=True)
class SkippedScore:
    """A score plugin of the profile that did not score this pod, its weight and why."""

    plugin: str
    weight: int | None
    reason: str


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
    # Score plugins PreScore skipped for this pod (upstream runs no Score for them).
    pre_score_skipped: list[SkippedScore] = field(default_factory=list)
    # Score plugins the engine does not model, with weight: the cluster may rank differently.
    ranking_may_differ_because: list[str] = field(default_factory=list)

    @property
    def filtered(self) -> int:
        return self.total - self.feasible

    @property
    def unmodelled_scores(self) -> list[SkippedScore]:
        """Score plugins of the profile the engine does not model (with a weight)."""
        return [
            SkippedScore(str(s.get("plugin")), int(s["weight"]), str(s.get("reason") or ""))
            for s in self.skipped
            if s.get("weight") is not None
        ]

    @property
    def unmodelled_others(self) -> list[Mapping[str, Any]]:
        """Plugins the engine does not model at other extension points than Score."""
        return [s for s in self.skipped if s.get("weight") is None]

    @property
    def has_loadaware(self) -> bool:
        """Whether LoadAware explained the ranked nodes (it is in the profile)."""
        return any(node.loadaware for node in self.ranked[:TOP_RANKED])

    @property
    def score_columns(self) -> list[tuple[list[str], int]]:
        """(the plugin's name in words, weight) per score plugin: a column heading that wraps
        between the words of ``NodeResourcesBalancedAllocation``."""
        return [(camel_words(plugin), weight) for plugin, weight in self.score_plugins]

    @property
    def breakdown_span(self) -> int:
        """Columns an expanded row's breakdown spans (all but the rank's)."""
        return 2 + len(self.score_plugins)

    @property
    def margin(self) -> Margin | None:
        """Why #1 beat #2, per score plugin."""
        return margin_of(self.ranked, self.score_plugins)

    @property
    def winner_parts(self) -> list[tuple[str, int, ScoreCell | None]]:
        """(plugin, weight, score) of the winner, one per score plugin."""
        if self.winner is None:
            return []
        return [
            (plugin, weight, cell)
            for (plugin, weight), cell in zip(self.score_plugins, self.winner.scores, strict=True)
        ]


def camel_words(name: str) -> list[str]:
    """``NodeResourcesFit`` -> ``["Node", "Resources", "Fit"]`` (runs of capitals kept)."""
    return re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+|[^A-Za-z0-9]+", name) or [name]


def _failures(entry: Mapping[str, Any]) -> list[Failure]:
    out: list[Failure] = []
    for f in entry.get("filters") or []:
        if f.get("code") == "Success":
            continue
        reasons = f.get("reasons") or [f.get("reason") or ""]
        out.extend(Failure(str(f.get("plugin")), str(f.get("code")), str(r)) for r in reasons)
    return out


def decision_view(
    explanation: Mapping[str, Any], pod: Mapping[str, Any] | None = None
) -> DecisionView:
    """Lay out the contract JSON (nodes come ranked feasible first, then infeasible by name);
    with the ``pod`` manifest evaluated, node affinity groups say which labels nodes lack."""
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
    groups: dict[tuple[str, str], FilterGroup] = {}
    entries: dict[str, Mapping[str, Any]] = {}
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
                    plugins=tuple(names),
                )
            )
            continue
        failures = _failures(entry)
        filtered = FilteredNode(name, failures, _filtered_loadaware(entry, failures))
        entries[name] = entry
        for failure in failures:
            key = (failure.plugin, failure.reason)
            group = groups.get(key)
            if group is None:
                group = groups[key] = FilterGroup(0, *key)
            if not group.nodes or group.nodes[-1] is not filtered:
                group.nodes.append(filtered)
            group.codes[failure.code] += 1
    ordered = sorted(groups.values(), key=lambda g: (-g.count, g.plugin, g.reason))
    for number, group in enumerate(ordered, start=1):
        group.number = number
        group.open = number == 1 or group.count <= OPEN_GROUP_SIZE
        if group.plugin == NODE_AFFINITY and group.reason == NODE_AFFINITY_REASON:
            group.hints = affinity_hints(
                [entries[n.name] for n in group.nodes], _node_selector(pod)
            )
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
        pre_score_skipped=[
            SkippedScore(
                str(s.get("plugin")),
                s.get("weight"),
                PRE_SCORE_SKIP_REASONS.get(str(s.get("plugin")), "its PreScore returned Skip"),
            )
            for s in explanation.get("preScoreSkipped") or []
        ],
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


def _node_selector(pod: Mapping[str, Any] | None) -> dict[str, str]:
    spec = (pod or {}).get("spec") or {}
    selector = spec.get("nodeSelector") if isinstance(spec, Mapping) else None
    if not isinstance(selector, Mapping):
        return {}
    return {str(k): str(v) for k, v in selector.items()}


def _values(key: str, values: Counter[str | None]) -> str:
    """``disktype=hdd (12), no disktype label (3)``: the most common values first."""
    ordered = sorted(values.items(), key=lambda item: (-item[1], item[0] is None, item[0] or ""))
    parts = [
        f"no {key} label ({count})" if value is None else f"{key}={value} ({count})"
        for value, count in ordered[:TOP_VALUES]
    ]
    rest = ordered[TOP_VALUES:]
    if rest:
        parts.append(
            f"{len(rest)} other value{'s' if len(rest) > 1 else ''} "
            f"({sum(count for _, count in rest)})"
        )
    return ", ".join(parts)


def affinity_hints(entries: Sequence[Mapping[str, Any]], selector: Mapping[str, str]) -> list[str]:
    """What a group of nodes NodeAffinity rejected lacks: per ``nodeSelector`` key the nodes
    mismatch, the value needed and the values they have; per required term none of them
    matches, its requirements and the nodes' values of its keys (with node counts)."""
    mismatched: dict[str, Counter[str | None]] = {}
    terms: dict[int, tuple[list[str], dict[str, Counter[str | None]]]] = {}
    for entry in entries:
        detail = (entry.get("details") or {}).get(NODE_AFFINITY) or {}
        for key, value in (detail.get("nodeSelectorMismatches") or {}).items():
            mismatched.setdefault(str(key), Counter())[value] += 1
        for term in detail.get("requiredTerms") or []:
            if term.get("matched"):
                continue
            requirements, labels = terms.setdefault(
                int(term.get("index") or 0), ([str(r) for r in term.get("requirements") or []], {})
            )
            for key, value in (term.get("nodeLabels") or {}).items():
                labels.setdefault(str(key), Counter())[value] += 1
    hints = []
    for key, values in mismatched.items():
        need = f"{key}={selector[key]}" if key in selector else f"its nodeSelector's {key}"
        hints.append(f"needs {need}; these nodes have {_values(key, values)}")
    for index, (requirements, labels) in sorted(terms.items()):
        term = f"node affinity term {index + 1}" if len(terms) > 1 else "node affinity"
        text = f"{term} needs {' and '.join(requirements) or 'nothing'}"
        if labels:
            text += "; these nodes have " + "; ".join(
                _values(key, values) for key, values in labels.items()
            )
        hints.append(text)
    return hints
