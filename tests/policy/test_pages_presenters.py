"""Presenters without a database: formatting, charts, node list queries, decision layout."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from policy.web import format as fmt
from policy.web.presenters import charts, explain
from policy.web.presenters.dashboard import Band, NodeQuery, histogram, select, sort_nodes
from policy.web.presenters.decision import decision_view
from policy.web.presenters.loadaware import cluster_load, default_plugin
from scoring.config import load_configuration
from scoring.engine import Engine
from scoring.objects import parse_pod
from scoring.snapshot import Snapshot
from scoring.synthetic import generate_cluster
from tests.scoring.builders import make_container, make_node, make_pod, single_profile_config

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def load() -> Any:
    snapshot = Snapshot.from_objects(generate_cluster(nodes=40, seed=3, now=NOW), warn=print)
    return cluster_load(snapshot, default_plugin(), NOW, origin="defaults", profile=None)


def test_formats() -> None:
    assert fmt.cores(15840) == "15.84" and fmt.cores(2000) == "2" and fmt.cores(None) == "—"
    assert fmt.binary(68 * 2**30) == "68 Gi" and fmt.binary(1536 * 2**20) == "1.5 Gi"
    assert fmt.binary(512) == "512 B"
    assert fmt.amount("cpu", 250) == "0.25" and fmt.amount("pods", 110) == "110"
    assert fmt.age(52) == "52 s" and fmt.age(1260) == "21 min" and fmt.age(90000) == "25 h"
    assert fmt.age(None) == "—" and fmt.percent(71) == "71%" and fmt.percent(12.5) == "12.5%"
    assert fmt.ratio(1, 3) == 33.3 and fmt.ratio(1, 0) is None


def test_charts_escape_text_and_title_every_value() -> None:
    chart = charts.histogram(
        [charts.Bin("<b>", 1, 2, href='?x="1"&y'), charts.Bin("c", 0, 0, href="?z")],
        label="a & b",
        marked=0,
    )
    assert "<b>" not in chart and "&lt;b&gt;" in chart and 'aria-label="a &amp; b"' in chart
    assert 'href="?x=&quot;1&quot;&amp;y"' in chart and "▲&lt;b&gt;" in chart
    assert "<title>&lt;b&gt;: 3 nodes (2 above their threshold)</title>" in chart
    assert 'href="?z"' not in chart  # an empty bar links nowhere
    assert "<script" not in chart and "kozea.github.io" not in chart  # no remote script
    assert charts.sparkline([], label="x") == ""
    line = charts.sparkline([1, 3, 2], label="trend <x>")
    assert 'class="spark pygal-chart"' in line and "trend &lt;x&gt;" in line
    columns = charts.stacked_columns(
        [charts.Stack("d1", [("scheduled", 2), ("error", 1)])], label="l"
    )
    assert "<title>d1: 2 scheduled, 1 error</title>" in columns
    assert ">scheduled</text>" in columns  # the legend names the series


def test_count_axis_ticks_are_whole_numbers() -> None:
    assert charts._count_ticks(0) == [0, 1]
    assert charts._count_ticks(3) == [0, 1, 2, 3]
    assert charts._count_ticks(12) == [0, 5, 10, 15]
    assert charts._count_ticks(4999) == [0, 1000, 2000, 3000, 4000, 5000]


def test_bands() -> None:
    assert str(Band.parse("cpu:60-70")) == "cpu:60-70"
    assert Band.parse("memory:100-") == Band("memory", 100, None)
    assert Band.parse("disk:1-2") is None and Band.parse("cpu:x-1") is None
    assert Band("cpu", 60, 70).label == "cpu load 60%–70%"
    assert Band("cpu", 100, None).label == "cpu load 100% and more"


def test_queries_and_sorting(load: Any) -> None:
    rows = load.rows
    everything = select(rows, NodeQuery())
    assert [n.name for n in everything] == sorted(n.name for n in rows)
    filtered = select(rows, NodeQuery.from_params({"state": "filtered", "sort": "-cpu_load"}))
    assert filtered and all(n.filtered for n in filtered)
    over = select(rows, NodeQuery(state="over"))
    assert all(n.over for n in over)
    by_memory = sort_nodes(list(rows), "memory_used")
    values = [n.memory_used for n in by_memory if n.memory_used is not None]
    assert values == sorted(values)
    assert by_memory[-1].memory_used is None or len(values) == len(rows)
    assert NodeQuery.from_params({"state": "bogus"}).state == ""


def test_histogram_bins_cover_every_measured_node(load: Any) -> None:
    bins, unmeasured = histogram(load.rows, "cpu", lambda band: f"?band={band}")
    assert len(bins) == 11
    assert sum(b.total for b in bins) + unmeasured == load.nodes
    assert sum(b.over for b in bins) == load.over("cpu")
    assert bins[-1].label == "cpu load 100% and more" and bins[0].href == "?band=cpu:0-10"


def _entry(name: str, feasible: bool, **extra: Any) -> dict[str, Any]:
    return {"name": name, "feasible": feasible, "filters": [], "scores": [], **extra}


def test_decision_layout_groups_every_failure() -> None:
    scores = [
        {"plugin": "A", "raw": 10, "normalized": 100, "weight": 2, "weighted": 200},
        {"plugin": "B", "raw": 5, "normalized": 5, "weight": 1, "weighted": 5},
    ]
    explanation = {
        "pod": "default/p",
        "profile": "default-scheduler",
        "selectedNode": "n1",
        "feasibleNodes": 1,
        "totalNodes": 3,
        "nodes": [
            _entry("n1", True, scores=scores, totalScore=205),
            _entry(
                "n2",
                False,
                filters=[
                    {"plugin": "NodeResourcesFit", "code": "Unschedulable", "reason": "x, y",
                     "reasons": ["Insufficient cpu", "Insufficient memory"]},
                    {"plugin": "LoadAwareScheduling", "code": "Unschedulable",
                     "reason": "node(s) cpu usage exceed threshold"},
                ],
                details={"LoadAwareScheduling": {"summary": "cpu 71% > 65%"}},
            ),
            _entry(
                "n3",
                False,
                filters=[{"plugin": "NodeResourcesFit", "code": "Unschedulable",
                          "reason": "Insufficient cpu"}],
            ),
        ],
        "skippedPlugins": [{"plugin": "VolumeBinding", "reason": "not modelled"}],
    }  # fmt: skip
    view = decision_view(explanation)
    assert view.winner is not None and view.winner.name == "n1" and view.filtered == 2
    assert view.winner_parts[0][0] == "A" and view.winner_parts[0][2].weighted == 200
    groups = {(g.plugin, g.reason): [n.name for n in g.nodes] for g in view.groups}
    assert groups == {
        ("NodeResourcesFit", "Insufficient cpu"): ["n2", "n3"],
        ("NodeResourcesFit", "Insufficient memory"): ["n2"],
        ("LoadAwareScheduling", "node(s) cpu usage exceed threshold"): ["n2"],
    }
    assert view.groups[0].count == 2 and view.groups[0].number == 1
    n2 = view.groups[0].nodes[0]
    assert n2.loadaware == "cpu 71% > 65%" and len(n2.failures) == 3
    assert view.skipped[0]["plugin"] == "VolumeBinding"
    empty = decision_view({"nodes": []})
    assert empty.winner is None and empty.groups == [] and empty.ranked == []


def _failing(name: str, plugin: str, code: str, reason: str) -> dict[str, Any]:
    return _entry(name, False, filters=[{"plugin": plugin, "code": code, "reason": reason}])


def test_groups_are_by_reason_with_the_codes_inside_and_the_largest_open() -> None:
    """One reason is one group whatever its result code (kube-scheduler marks a node
    UnschedulableAndUnresolvable when the pod asks for more than the node has at all); the
    largest group and the small ones are open."""
    fit, taint, cordon = "NodeResourcesFit", "TaintToleration", "NodeUnschedulable"
    nodes = [
        *(_failing(f"a{i}", fit, "Unschedulable", "Insufficient cpu") for i in range(4)),
        *(
            _failing(f"b{i}", fit, "UnschedulableAndUnresolvable", "Insufficient cpu")
            for i in range(2)
        ),
        *(_failing(f"c{i}", taint, "UnschedulableAndUnresolvable", "taint") for i in range(5)),
        *(_failing(f"d{i}", cordon, "UnschedulableAndUnresolvable", "cordon") for i in range(2)),
    ]
    view = decision_view({"nodes": nodes, "feasibleNodes": 0, "totalNodes": len(nodes)})
    summary = [(g.plugin, g.reason, g.count, g.code_counts, g.open) for g in view.groups]
    assert summary == [
        (fit, "Insufficient cpu", 6,
         [("Unschedulable", 4), ("UnschedulableAndUnresolvable", 2)], True),
        (taint, "taint", 5, [("UnschedulableAndUnresolvable", 5)], False),
        (cordon, "cordon", 2, [("UnschedulableAndUnresolvable", 2)], True),
    ]  # fmt: skip


def test_node_affinity_groups_say_which_label_the_nodes_lack() -> None:
    nodes = [
        *(make_node(f"hdd-{i}", CPU, labels={"disktype": "hdd", "zone": "a"}) for i in range(3)),
        make_node("nvme", CPU, labels={"disktype": "nvme", "zone": "b"}),
        *(make_node(f"bare-{i}", CPU) for i in range(2)),
        make_node("ssd", CPU, labels={"disktype": "ssd", "zone": "c"}),
    ]
    required = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "c"]}]}
        ]
    }
    manifest = make_pod("p", containers=[make_container("app", {"cpu": 100})], spec={
        "nodeSelector": {"disktype": "ssd"},
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}},
    })  # fmt: skip
    decision = Engine().evaluate(parse_pod(manifest), Snapshot.from_objects(nodes), NOW)
    view = decision_view(decision.to_dict(), manifest)
    (group,) = view.groups
    assert group.plugin == "NodeAffinity" and group.count == 6
    assert group.hints == [
        "needs disktype=ssd; these nodes have disktype=hdd (3), no disktype label (2), "
        "disktype=nvme (1)",
        "node affinity needs zone in (a,c); these nodes have no zone label (2), zone=b (1)",
    ]
    # Without the manifest the key is still named.
    assert (
        decision_view(decision.to_dict())
        .groups[0]
        .hints[0]
        .startswith("needs its nodeSelector's disktype; these nodes have disktype=hdd (3)")
    )


def test_score_plugins_prescore_skipped_are_named_with_weight_and_why() -> None:
    nodes = [make_node(f"n{i}", CPU) for i in range(2)]
    manifest = make_pod("p", containers=[make_container("app", {"cpu": 100})])
    decision = Engine().evaluate(parse_pod(manifest), Snapshot.from_objects(nodes), NOW)
    explanation = decision.to_dict()
    assert explanation["preScoreSkipped"] == [
        {"plugin": "NodeAffinity", "weight": 2},
        {"plugin": "PodTopologySpread", "weight": 2},
        {"plugin": "InterPodAffinity", "weight": 2},
    ]
    view = decision_view(explanation)
    assert [(s.plugin, s.weight) for s in view.pre_score_skipped] == [
        ("NodeAffinity", 2),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
    ]
    assert "no preferred node affinity terms" in view.pre_score_skipped[0].reason
    scored = {name for name, _ in view.score_plugins}
    assert not scored & {s.plugin for s in view.pre_score_skipped}
    # Not modelled score plugins, with their weights; the others apart.
    assert ("DynamicResources", 2) in [(s.plugin, s.weight) for s in view.unmodelled_scores]
    best_effort = make_pod("be", containers=[make_container("app")])
    skipped = Engine().evaluate(parse_pod(best_effort), Snapshot.from_objects(nodes), NOW)
    names = [s["plugin"] for s in skipped.to_dict()["preScoreSkipped"]]
    assert "NodeResourcesBalancedAllocation" in names


CPU = {"cpu": 16000, "memory": 64 * 2**30, "pods": 110}


def _fit(strategy: dict[str, Any] | None, requests: dict[str, Any]) -> explain.FitView:
    """NodeResourcesFit's card for a pod on a node already running a 4-core, 16 Gi pod."""
    nodes = [make_node("n1", CPU)]
    placed = make_pod("old", node_name="n1", containers=[
        make_container("app", {"cpu": 4000, "memory": 16 * 2**30})])  # fmt: skip
    config = None
    if strategy is not None:
        plugins = {"multiPoint": {"enabled": [{"name": "NodeResourcesFit"}]}}
        args = {"name": "NodeResourcesFit", "args": {"scoringStrategy": strategy}}
        config = load_configuration(single_profile_config(plugins, [args]))
    pod = parse_pod(make_pod("p", containers=[make_container("app", requests)]))
    decision = Engine(config).evaluate(pod, Snapshot.from_objects([*nodes, placed]), NOW)
    entry = decision.to_dict()["nodes"][0]
    raw = next((s["raw"] for s in entry["scores"] if s["plugin"] == "NodeResourcesFit"), None)
    view = explain.fit_view(entry["details"]["NodeResourcesFit"], raw)
    assert view is not None
    return view


def test_node_resources_fit_card_in_cores_and_gi_with_the_formula() -> None:
    view = _fit(None, {"cpu": 2000, "memory": 8 * 2**30})
    cpu, memory, pods = view.resources
    assert (cpu.resource, cpu.pod, cpu.on_node, cpu.requested, cpu.allocatable, cpu.unit) == (
        "cpu", "2", "4", "6", "16", "cores",
    )  # fmt: skip
    assert (memory.requested, memory.allocatable, memory.free, memory.percent) == (
        "24 Gi", "64 Gi", "48 Gi", "37.5%",
    )  # fmt: skip
    assert (pods.requested, pods.allocatable) == ("2", "110") and all(
        r.fits for r in view.resources
    )
    assert view.strategy == "LeastAllocated" and "(allocatable − requested)" in view.formula
    # (16 − 6) × 100 / 16 = 62; (64 − 24) × 100 / 64 = 62; the average 62 is the raw score.
    assert [(line.resource, line.formula, line.weight) for line in view.lines] == [
        ("cpu", "(16 − 6) × 100 / 16 = 62", 1),
        ("memory", "(64 Gi − 24 Gi) × 100 / 64 Gi = 62", 1),
    ]
    assert view.average == "(62 × 1 + 62 × 1) / 2 = 62" and view.raw == 62


def test_node_resources_fit_card_most_allocated_and_shape() -> None:
    resources = [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}]
    most = _fit({"type": "MostAllocated", "resources": resources}, {"cpu": 2000, "memory": 2**30})
    assert [line.formula for line in most.lines] == [
        "6 × 100 / 16 = 37",
        "17 Gi × 100 / 64 Gi = 26",
    ]
    assert most.average == "(37 × 3 + 26 × 1) / 4 = 34" and most.raw == 34
    shape = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
    ratio = _fit(
        {"type": "RequestedToCapacityRatio", "resources": resources,
         "requestedToCapacityRatio": {"shape": shape}},
        {"cpu": 2000, "memory": 2**30},
    )  # fmt: skip
    assert ratio.shape == ["0% → 0", "100% → 100"]
    assert (
        ratio.lines[0].formula
        == "6 × 100 / 16 = 37%; f(37) = 0 + (100 − 0) × (37 − 0) / (100 − 0) = 37"
    )
    assert ratio.average == "round((37 × 3 + 26 × 1) / 4) = 34" and ratio.raw == 34
    assert explain.fit_view(None) is None


def test_node_resources_fit_card_of_a_node_too_small() -> None:
    view = _fit(None, {"cpu": 13000})
    cpu = view.resources[0]
    assert not cpu.fits and (cpu.requested, cpu.free) == ("17", "12")
    assert view.lines[0].formula == "17 requested > 16 allocatable: 0" and view.raw is None


def test_decisions_stored_before_the_arithmetic_was_recorded_still_show() -> None:
    """Explanations stored by earlier releases lack NodeResourcesFit's ``scored``, node
    affinity terms' ``nodeLabels`` and ``preScoreSkipped``: the pages show what there is."""
    old = {"strategy": "LeastAllocated", "resources": {
        "cpu": {"allocatable": 4000, "requested": 1000, "pod": 500},
        "ephemeral-storage": {"allocatable": 10, "requested": 0, "pod": 0}}}  # fmt: skip
    view = explain.fit_view(old)
    assert view is not None and view.lines == [] and view.average == ""
    assert [(r.resource, r.requested, r.allocatable) for r in view.resources] == [
        ("cpu", "1.5", "4")
    ]
    affinity = {"requiredTerms": [{"index": 0, "matched": False, "requirements": ["az"]}]}
    node = _failing("n1", "NodeAffinity", "UnschedulableAndUnresolvable",
                    "node(s) didn't match Pod's node affinity/selector")  # fmt: skip
    node["details"] = {"NodeAffinity": affinity}
    decision = decision_view({"nodes": [node]})
    assert decision.groups[0].hints == ["node affinity needs az"]
    assert decision.pre_score_skipped == []


def test_image_locality_card_reads_the_engine_explanation() -> None:
    nodes = []
    for name, held in (("a", True), ("b", True), ("c", False), ("d", False)):
        node = make_node(name, {"cpu": 4000, "memory": 8 * 2**30, "pods": 10})
        if held:
            node["status"]["images"] = [{"names": ["shop/web:3"], "sizeBytes": 600 * 2**20}]
        nodes.append(node)
    snapshot = Snapshot.from_objects(nodes)
    pod = parse_pod(make_pod("web", containers=[make_container("app", image="shop/web:3")]))
    decision = Engine().evaluate(pod, snapshot, NOW)
    view = explain.imagelocality_view(decision.details(0)["ImageLocality"])
    assert view is not None
    # 600 Mi on 2 of 4 nodes: 300 Mi counted; 100 * (300 - 23) / (1000 - 23) = 28.
    (line,) = view.lines
    assert (line.on_node, line.size, line.nodes, line.spread, line.scaled) == (
        True,
        "600 Mi",
        "2 of 4",
        "50%",
        "300 Mi",
    )
    assert (view.total, view.max_threshold, view.score) == ("300 Mi", "1000 Mi", 28)
    assert explain.imagelocality_view(None) is None
