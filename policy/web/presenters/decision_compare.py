"""Two decisions side by side: the same pod under two configurations, or at two times.

Nodes are matched by name. A node's line says where each decision ranked it (or why it
filtered it) and by how much its total moved; the lines that matter come first: nodes whose
feasibility differs, then by their better rank. Each winner's score is split by plugin on both
sides, so a changed weight or argument shows where it acted.
"""

from __future__ import annotations

from dataclasses import dataclass

from policy.web.presenters.decision import DecisionView, RankedNode

SHOWN_LINES = 50


@dataclass(frozen=True)
class Side:
    rank: int | None  # None: filtered (or absent)
    total: int | None
    reason: str  # why it was filtered ("" when feasible; "not in this snapshot")


@dataclass(frozen=True)
class NodeLine:
    name: str
    a: Side
    b: Side

    @property
    def delta(self) -> int | None:
        if self.a.total is None or self.b.total is None:
            return None
        return self.b.total - self.a.total

    @property
    def changed(self) -> bool:
        """Feasible in one and not the other."""
        return (self.a.rank is None) != (self.b.rank is None)


@dataclass(frozen=True)
class PluginLine:
    plugin: str
    a: int | None  # the winner's weighted score under A
    b: int | None


@dataclass(frozen=True)
class DecisionComparison:
    lines: list[NodeLine]  # the ones worth reading first, at most SHOWN_LINES
    total_nodes: int
    changed: int  # nodes feasible under one decision only
    same_winner: bool
    winners: list[PluginLine]


def _sides(view: DecisionView) -> dict[str, Side]:
    sides = {n.name: Side(n.rank, n.total, "") for n in view.ranked}
    for group in view.groups:
        for node in group.nodes:
            sides.setdefault(node.name, Side(None, None, f"{group.plugin}: {group.reason}"))
    return sides


def _parts(view: DecisionView, node: RankedNode | None) -> dict[str, int]:
    if node is None:
        return {}
    return {
        plugin: cell.weighted
        for (plugin, _), cell in zip(view.score_plugins, node.scores, strict=True)
        if cell is not None
    }


def compare(a: DecisionView, b: DecisionView) -> DecisionComparison:
    left, right = _sides(a), _sides(b)
    absent = Side(None, None, "not in this snapshot")
    lines = [
        NodeLine(name, left.get(name, absent), right.get(name, absent))
        for name in sorted(set(left) | set(right))
    ]

    def importance(line: NodeLine) -> tuple[int, int, str]:
        ranks = [r for r in (line.a.rank, line.b.rank) if r is not None]
        return (0 if line.changed else 1, min(ranks, default=1 << 30), line.name)

    lines.sort(key=importance)
    parts_a, parts_b = _parts(a, a.winner), _parts(b, b.winner)
    plugins = list(dict.fromkeys([*parts_a, *parts_b]))
    return DecisionComparison(
        lines=lines[:SHOWN_LINES],
        total_nodes=len(lines),
        changed=sum(line.changed for line in lines),
        same_winner=a.selected == b.selected,
        winners=[PluginLine(p, parts_a.get(p), parts_b.get(p)) for p in plugins],
    )
