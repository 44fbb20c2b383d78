"""Why #1 beat #2: each score plugin's share of the gap, largest first; the parts add up."""

from __future__ import annotations

from policy.web.presenters.decision import RankedNode, ScoreCell, camel_words, margin_of

PLUGINS = [("NodeResourcesFit", 1), ("LoadAwareScheduling", 2), ("ImageLocality", 1)]


def node(rank: int, name: str, *weighted: int | None) -> RankedNode:
    cells = [None if w is None else ScoreCell(w, w, 1, w) for w in weighted]
    total = sum(w or 0 for w in weighted)
    return RankedNode(rank, name, total, cells, "", tuple(p for p, _ in PLUGINS))


def test_parts_add_up_to_the_gap_largest_first() -> None:
    margin = margin_of([node(1, "a", 80, 150, 0), node(2, "b", 90, 120, None)], PLUGINS)
    assert margin is not None
    assert margin.gap == 20
    assert [(p.plugin, p.delta) for p in margin.parts] == [
        ("LoadAwareScheduling", 30),
        ("NodeResourcesFit", -10),
        ("ImageLocality", 0),
    ]
    assert sum(p.delta for p in margin.parts) == margin.gap
    assert [p.plugin for p in margin.deciding] == ["LoadAwareScheduling", "NodeResourcesFit"]


def test_a_tie_and_a_single_node() -> None:
    margin = margin_of([node(1, "a", 50, 50, 0), node(2, "b", 50, 50, 0)], PLUGINS)
    assert margin is not None and margin.gap == 0 and margin.deciding == []
    assert margin_of([node(1, "a", 1, 2, 3)], PLUGINS) is None


def test_plugin_names_wrap_between_words() -> None:
    assert camel_words("NodeResourcesBalancedAllocation") == [
        "Node",
        "Resources",
        "Balanced",
        "Allocation",
    ]
    assert camel_words("NUMATopology") == ["NUMA", "Topology"]
    assert "".join(camel_words("example.com/MyScore")) == "example.com/MyScore"
