"""TaintToleration: Filter, PreScore, Score and NormalizeScore as kube-scheduler 1.35.

Tables ported from pkg/scheduler/framework/plugins/tainttoleration/taint_toleration_test.go
(TestTaintTolerationFilter, TestTaintTolerationScore) and from k8s.io/api/core/v1
toleration_test.go (TestTolerationToleratesTaint, TestCompareNumericValues).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from scoring.framework import Code, Cycle, PluginError, Status
from scoring.objects import Taint, Toleration, parse_pod
from scoring.plugins.tainttoleration import REASON, TaintToleration, tolerates
from scoring.snapshot import Snapshot
from tests.scoring.builders import (
    evaluate,
    make_node,
    make_pod,
    only_plugin_config,
    plugin_filter,
    plugin_score,
)

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def taint(key: str, value: str, effect: str) -> dict[str, str]:
    return (
        {"key": key, "value": value, "effect": effect} if value else {"key": key, "effect": effect}
    )


def toleration(
    key: str = "", operator: str = "", value: str = "", effect: str = ""
) -> dict[str, str]:
    raw = {"key": key, "operator": operator, "value": value, "effect": effect}
    return {k: v for k, v in raw.items() if v}


def cycle_for(
    taint_sets: Sequence[Sequence[Mapping[str, str]]], tolerations: Sequence[Mapping[str, str]]
) -> Cycle:
    nodes = [
        make_node(f"node{chr(65 + i)}", {"cpu": 1000}, taints=t) for i, t in enumerate(taint_sets)
    ]
    pod = parse_pod(make_pod("pod1", spec={"tolerations": list(tolerations)}))
    return Cycle(pod, Snapshot.from_objects(nodes), NOW)


# -- Filter (TestTaintTolerationFilter) -----------------------------------------------------------

FILTER_CASES = [
    ("no tolerations, NoSchedule taint", [], [taint("dedicated", "user1", "NoSchedule")], False),
    (
        "tolerated dedicated node",
        [toleration("dedicated", value="user1", effect="NoSchedule")],
        [taint("dedicated", "user1", "NoSchedule")],
        True,
    ),
    (
        "value mismatch",
        [toleration("dedicated", "Equal", "user2", "NoSchedule")],
        [taint("dedicated", "user1", "NoSchedule")],
        False,
    ),
    (
        "Exists tolerates any value",
        [toleration("foo", "Exists", effect="NoSchedule")],
        [taint("foo", "bar", "NoSchedule")],
        True,
    ),
    (
        "every taint tolerated",
        [
            toleration("dedicated", "Equal", "user2", "NoSchedule"),
            toleration("foo", "Exists", effect="NoSchedule"),
        ],
        [taint("dedicated", "user2", "NoSchedule"), taint("foo", "bar", "NoSchedule")],
        True,
    ),
    (
        "effect mismatch",
        [toleration("foo", "Equal", "bar", "PreferNoSchedule")],
        [taint("foo", "bar", "NoSchedule")],
        False,
    ),
    (
        "empty effect tolerates all effects",
        [toleration("foo", "Equal", "bar")],
        [taint("foo", "bar", "NoSchedule")],
        True,
    ),
    (
        "PreferNoSchedule taints never filter",
        [toleration("dedicated", "Equal", "user2", "NoSchedule")],
        [taint("dedicated", "user1", "PreferNoSchedule")],
        True,
    ),
    (
        "no toleration, PreferNoSchedule taint",
        [],
        [taint("dedicated", "user1", "PreferNoSchedule")],
        True,
    ),
    ("NoExecute taints filter too", [], [taint("k", "", "NoExecute")], False),
    (
        "empty key with Exists tolerates everything",
        [toleration(operator="Exists")],
        [taint("a", "b", "NoExecute"), taint("c", "", "NoSchedule")],
        True,
    ),
    (
        "empty key with Equal: any key, same value (only API validation forbids it)",
        [toleration(value="b")],
        [taint("a", "b", "NoSchedule")],
        True,
    ),
]


@pytest.mark.parametrize(
    ("tolerations", "taints", "fits"),
    [c[1:] for c in FILTER_CASES],
    ids=[c[0] for c in FILTER_CASES],
)
def test_filter(
    tolerations: list[dict[str, str]], taints: list[dict[str, str]], fits: bool
) -> None:
    status = TaintToleration({}).filter(cycle_for([taints], tolerations)).status(0)
    assert status == (Status() if fits else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (REASON,)))


def test_filter_reason_no_longer_names_the_taint() -> None:
    assert REASON == "node(s) had untolerated taint(s)"


# -- Score (TestTaintTolerationScore) -------------------------------------------------------------

PREFER = "PreferNoSchedule"
SCORE_CASES = [
    (
        "tolerated taints score higher",
        [toleration("foo", "Equal", "bar", PREFER)],
        [[taint("foo", "bar", PREFER)], [taint("foo", "blah", PREFER)]],
        [100, 0],
    ),
    (
        "the number of tolerated taints does not matter",
        [
            toleration("cpu-type", "Equal", "arm64", PREFER),
            toleration("disk-type", "Equal", "ssd", PREFER),
        ],
        [
            [],
            [taint("cpu-type", "arm64", PREFER)],
            [taint("cpu-type", "arm64", PREFER), taint("disk-type", "ssd", PREFER)],
        ],
        [100, 100, 100],
    ),
    (
        "more intolerable taints, lower score",
        [toleration("foo", "Equal", "bar", PREFER)],
        [
            [],
            [taint("cpu-type", "arm64", PREFER)],
            [taint("cpu-type", "arm64", PREFER), taint("disk-type", "ssd", PREFER)],
        ],
        [100, 50, 0],
    ),
    (
        "only PreferNoSchedule taints and tolerations count",
        [
            toleration("cpu-type", "Equal", "arm64", "NoSchedule"),
            toleration("disk-type", "Equal", "ssd", "NoSchedule"),
        ],
        [
            [],
            [taint("cpu-type", "arm64", "NoSchedule")],
            [taint("cpu-type", "arm64", PREFER), taint("disk-type", "ssd", PREFER)],
        ],
        [100, 100, 0],
    ),
    (
        "default: prefer nodes without taints",
        [],
        [[], [taint("cpu-type", "arm64", PREFER)]],
        [100, 0],
    ),
]


@pytest.mark.parametrize(
    ("tolerations", "taint_sets", "want"),
    [c[1:] for c in SCORE_CASES],
    ids=[c[0] for c in SCORE_CASES],
)
def test_score(
    tolerations: list[dict[str, str]], taint_sets: list[list[dict[str, str]]], want: list[int]
) -> None:
    cycle = cycle_for(taint_sets, tolerations)
    plugin = TaintToleration({})
    feasible = np.arange(len(taint_sets), dtype=np.int64)
    assert plugin.pre_score(cycle, feasible).ok
    assert plugin.normalize(cycle, plugin.score(cycle, feasible)).tolist() == want


def test_score_without_pre_score_fails_like_upstream() -> None:
    cycle = cycle_for([[]], [])
    with pytest.raises(
        PluginError, match='failed to read "PreScoreTaintToleration" from cycleState'
    ):
        TaintToleration({}).score(cycle, np.arange(1))


def test_explain_lists_untolerated_and_intolerable_taints() -> None:
    taints = [taint("a", "1", "NoSchedule"), taint("b", "", "NoExecute"), taint("c", "x", PREFER)]
    cycle = cycle_for([taints, []], [toleration("b", "Exists")])
    plugin = TaintToleration({})
    assert plugin.explain(cycle, 0) == {
        "taints": ["a=1:NoSchedule", "b:NoExecute", "c=x:PreferNoSchedule"],
        "untolerated": ["a=1:NoSchedule"],
        "intolerablePreferNoSchedule": ["c=x:PreferNoSchedule"],
    }
    assert plugin.explain(cycle, 1) is None


# -- ToleratesTaint, including the 1.35 comparison operators --------------------------------------

SLA = "node.kubernetes.io/sla"
TOLERATES_CASES = [
    (
        "Exists, taint without value",
        Toleration("foo", "Exists", "", "NoSchedule"),
        Taint("foo", "", "NoSchedule"),
        True,
    ),
    (
        "Exists, taint with value",
        Toleration("foo", "Exists", "", "NoSchedule"),
        Taint("foo", "bar", "NoSchedule"),
        True,
    ),
    (
        "empty key and Exists",
        Toleration("", "Exists", "", "NoSchedule"),
        Taint("foo", "bar", "NoSchedule"),
        True,
    ),
    (
        "Equal, same value",
        Toleration("foo", "Equal", "bar", "NoSchedule"),
        Taint("foo", "bar", "NoSchedule"),
        True,
    ),
    (
        "Equal, other value",
        Toleration("foo", "Equal", "value1", "NoSchedule"),
        Taint("foo", "value2", "NoSchedule"),
        False,
    ),
    (
        "Equal, other effect",
        Toleration("foo", "Equal", "bar", "NoSchedule"),
        Taint("foo", "bar", "NoExecute"),
        False,
    ),
    (
        "Gt, taint below",
        Toleration(SLA, "Gt", "950", "NoSchedule"),
        Taint(SLA, "800", "NoSchedule"),
        False,
    ),
    (
        "Gt, taint above",
        Toleration(SLA, "Gt", "750", "NoSchedule"),
        Taint(SLA, "950", "NoSchedule"),
        True,
    ),
    (
        "Lt, taint above",
        Toleration(SLA, "Lt", "800", "NoSchedule"),
        Taint(SLA, "950", "NoSchedule"),
        False,
    ),
    (
        "Lt, taint below",
        Toleration(SLA, "Lt", "950", "NoSchedule"),
        Taint(SLA, "800", "NoSchedule"),
        True,
    ),
    (
        "Gt, equal values",
        Toleration(SLA, "Gt", "950", "NoSchedule"),
        Taint(SLA, "950", "NoSchedule"),
        False,
    ),
    (
        "Gt, non-numeric taint",
        Toleration(SLA, "Gt", "950", "NoSchedule"),
        Taint(SLA, "high", "NoSchedule"),
        False,
    ),
    (
        "Gt, negative values",
        Toleration("k", "Gt", "-100", "NoSchedule"),
        Taint("k", "-200", "NoSchedule"),
        False,
    ),
    (
        "Gt, large int64",
        Toleration("k", "Gt", "9223372036854775806", "NoSchedule"),
        Taint("k", "100", "NoSchedule"),
        False,
    ),
    (
        "Gt, other key",
        Toleration("k", "Gt", "1", "NoSchedule"),
        Taint("j", "5", "NoSchedule"),
        False,
    ),
]


@pytest.mark.parametrize(
    ("tol", "tnt", "want"), [c[1:] for c in TOLERATES_CASES], ids=[c[0] for c in TOLERATES_CASES]
)
def test_tolerates_taint(tol: Toleration, tnt: Taint, want: bool) -> None:
    assert tolerates(tol, tnt, comparison_operators=True) is want
    if tol.operator in ("Gt", "Lt"):  # the gate is off by default in 1.35: nothing tolerated
        assert tolerates(tol, tnt, comparison_operators=False) is False


COMPARE_CASES = [
    ("100", "200", "Gt", True),
    ("200", "100", "Gt", False),
    ("100", "100", "Gt", False),
    ("-100", "-50", "Gt", True),
    ("-50", "-100", "Gt", False),
    ("0", "1", "Gt", True),
    ("9223372036854775806", "9223372036854775807", "Gt", True),
    ("200", "100", "Lt", True),
    ("100", "200", "Lt", False),
    ("100", "100", "Lt", False),
    ("-50", "-100", "Lt", True),
    ("-100", "-50", "Lt", False),
    ("0", "-1", "Lt", True),
    ("abc", "100", "Gt", False),
    ("", "100", "Gt", False),
    ("0100", "200", "Gt", False),
    ("+100", "200", "Gt", False),
    ("100.5", "200", "Gt", False),
    ("-", "100", "Gt", False),
    ("100", "xyz", "Gt", False),
    ("100", "", "Gt", False),
    ("100", "0200", "Gt", False),
    ("100", "+200", "Lt", False),
    ("100", " 200 ", "Lt", False),
    ("0", "0", "Gt", False),
    ("0", "0", "Lt", False),
    ("0", "9223372036854775807", "Gt", True),
    ("0", "-9223372036854775808", "Lt", True),
    ("0", "-0", "Lt", False),
    ("0", "9223372036854775808", "Gt", False),
]


@pytest.mark.parametrize(("toleration_value", "taint_value", "operator", "want"), COMPARE_CASES)
def test_compare_numeric_values(
    toleration_value: str, taint_value: str, operator: str, want: bool
) -> None:
    tol = Toleration("k", operator, toleration_value, "")
    assert tolerates(tol, Taint("k", taint_value, "NoSchedule"), comparison_operators=True) is want


def test_comparison_gate_flows_through_the_plugin() -> None:
    cycle = cycle_for([[taint(SLA, "990", "NoSchedule")]], [toleration(SLA, "Gt", "950")])
    assert not TaintToleration({}).filter(cycle).passed[0]

    class GateOn(TaintToleration):
        comparison_operators = True

    assert (
        GateOn({})
        .filter(cycle_for([[taint(SLA, "990", "NoSchedule")]], [toleration(SLA, "Gt", "950")]))
        .passed[0]
    )


# -- vectorization --------------------------------------------------------------------------------


def reference_tolerates(tol: Mapping[str, str], tnt: Mapping[str, str]) -> bool:
    if tol.get("effect") and tol["effect"] != tnt["effect"]:
        return False
    if tol.get("key") and tol["key"] != tnt["key"]:
        return False
    if tol.get("operator", "Equal") == "Equal":
        return tol.get("value", "") == tnt.get("value", "")
    return tol.get("operator") == "Exists"


def reference_node(
    taints: Sequence[Mapping[str, str]], tolerations: Sequence[Mapping[str, str]]
) -> tuple[bool, int]:
    """Straight from the upstream loops: (fits, intolerable PreferNoSchedule count)."""
    fits = all(
        any(reference_tolerates(t, x) for t in tolerations)
        for x in taints
        if x["effect"] in ("NoSchedule", "NoExecute")
    )
    prefer_tolerations = [t for t in tolerations if t.get("effect", "") in ("", PREFER)]
    count = sum(
        1
        for x in taints
        if x["effect"] == PREFER and not any(reference_tolerates(t, x) for t in prefer_tolerations)
    )
    return fits, count


TOLERATION_POOL = [
    toleration(operator="Exists"),
    toleration("gpu", "Exists"),
    toleration("gpu", "Equal", "a"),
    toleration("dedicated", value="b", effect="NoSchedule"),
    toleration("dedicated", "Exists", effect="NoExecute"),
    toleration("spot", "Exists", effect=PREFER),
    toleration("spot", effect="NoExecute"),
]


def test_vectorized_plugin_equals_per_node_reference() -> None:
    rng = random.Random(3)
    pool = [
        taint(k, v, e)
        for k in ("gpu", "dedicated", "spot")
        for v in ("", "a", "b")
        for e in ("NoSchedule", "NoExecute", PREFER)
    ]
    taint_sets = [rng.sample(pool, rng.choice([0, 0, 1, 1, 2, 3])) for _ in range(300)]
    for _ in range(20):
        tolerations = rng.sample(TOLERATION_POOL, rng.randint(0, 3))
        cycle = cycle_for(taint_sets, tolerations)
        plugin = TaintToleration({})
        feasible = np.arange(len(taint_sets), dtype=np.int64)
        plugin.pre_score(cycle, feasible)
        want = [reference_node(ts, tolerations) for ts in taint_sets]
        assert plugin.filter(cycle).passed.tolist() == [fits for fits, _ in want]
        assert plugin.score(cycle, feasible).tolist() == [count for _, count in want]


# -- through the CLI ------------------------------------------------------------------------------


def test_cli_reports_taint_filter_and_reversed_scores(tmp_path: Path) -> None:
    allocatable = {"cpu": 4000, "memory": 8 << 30, "pods": 110}
    nodes = [
        make_node("clean", allocatable),
        make_node("one", allocatable, taints=[taint("a", "", PREFER)]),
        make_node("two", allocatable, taints=[taint("a", "", PREFER), taint("b", "1", PREFER)]),
        make_node("blocked", allocatable, taints=[taint("gpu", "true", "NoSchedule")]),
    ]
    pod = make_pod("web", spec={"containers": [{"name": "c", "image": "x"}]})
    config = only_plugin_config("TaintToleration", ("filter", "preScore", "score"), weight=3)
    decision = evaluate(tmp_path, nodes, pod, config=config)
    assert plugin_filter(decision, "blocked", "TaintToleration") == {
        "plugin": "TaintToleration",
        "code": "UnschedulableAndUnresolvable",
        "reason": "node(s) had untolerated taint(s)",
    }
    got = {n: plugin_score(decision, n, "TaintToleration") for n in ("clean", "one", "two")}
    assert {n: (s["raw"], s["normalized"], s["weighted"]) for n, s in got.items() if s} == {
        "clean": (0, 100, 300),
        "one": (1, 50, 150),
        "two": (2, 0, 0),
    }
    assert decision["selectedNode"] == "clean"


def test_cli_score_without_pre_score_fails_the_cycle(tmp_path: Path) -> None:
    nodes = [make_node(n, {"cpu": 1000, "pods": 110}) for n in ("a", "b")]
    pod = make_pod("web", spec={"containers": [{"name": "c", "image": "x"}]})
    config = only_plugin_config("TaintToleration", ("filter", "score"))
    decision = evaluate(tmp_path, nodes, pod, config=config)
    assert decision["selectedNode"] is None
    assert decision["error"] == (
        'running Score plugins: plugin "TaintToleration" failed with: '
        'failed to read "PreScoreTaintToleration" from cycleState: not found'
    )
