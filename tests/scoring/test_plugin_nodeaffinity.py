"""NodeAffinity: PreFilter/Filter/PreScore/Score/NormalizeScore as kube-scheduler 1.35.

Tables ported from pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go
(TestNodeAffinity, TestNodeAffinityPriority); the plugin is driven directly, and through the CLI
once the configuration package is available.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from scoring.framework import Code, Cycle, PluginError, Status
from scoring.objects import parse_pod
from scoring.plugins.nodeaffinity import (
    REASON_CONFLICT,
    REASON_ENFORCED,
    REASON_POD,
    NodeAffinity,
)
from scoring.selectors import SelectorError
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


def cycle_for(nodes: Sequence[Mapping[str, Any]], spec: Mapping[str, Any]) -> Cycle:
    pod = parse_pod(make_pod("pod", spec=spec))
    return Cycle(pod, Snapshot.from_objects(nodes), NOW)


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, **({"values": list(values)} if values else {})}


def name_in(*names: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


def required(*terms: Mapping[str, Any]) -> dict[str, Any]:
    selector = {"nodeSelectorTerms": list(terms)}
    return {"requiredDuringSchedulingIgnoredDuringExecution": selector}


def affinity(node_affinity: Mapping[str, Any]) -> dict[str, Any]:
    return {"affinity": {"nodeAffinity": dict(node_affinity)}}


def preferred(*weighted: tuple[int, Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    terms = [{"weight": w, "preference": {"matchExpressions": list(e)}} for w, e in weighted]
    return {"preferredDuringSchedulingIgnoredDuringExecution": terms}


def added(node_affinity: Mapping[str, Any]) -> dict[str, Any]:
    return {"addedAffinity": dict(node_affinity)}


# -- Filter (TestNodeAffinity) ------------------------------------------------------------------

SKIP = "Skip"
FILTER_CASES: list[
    tuple[str, dict[str, Any], dict[str, str], str, dict[str, Any], str | None, str | None]
] = [
    # (name, pod spec, node labels, node name, args, PreFilter verdict, Filter reason)
    ("missing labels", {"nodeSelector": {"foo": "bar"}}, {}, "node", {}, None, REASON_POD),
    ("same labels", {"nodeSelector": {"foo": "bar"}}, {"foo": "bar"}, "node", {}, None, None),
    (
        "node labels are superset",
        {"nodeSelector": {"foo": "bar"}},
        {"foo": "bar", "baz": "blah"},
        "node",
        {},
        None,
        None,
    ),
    (
        "node labels are subset",
        {"nodeSelector": {"foo": "bar", "baz": "blah"}},
        {"foo": "bar"},
        "node",
        {},
        None,
        REASON_POD,
    ),
    (
        "In matches",
        affinity(required({"matchExpressions": [expr("foo", "In", "bar", "value2")]})),
        {"foo": "bar"},
        "node",
        {},
        None,
        None,
    ),
    (
        "Gt matches",
        affinity(required({"matchExpressions": [expr("kernel-version", "Gt", "0204")]})),
        {"kernel-version": "0206"},
        "node",
        {},
        None,
        None,
    ),
    (
        "NotIn matches",
        affinity(required({"matchExpressions": [expr("mem-type", "NotIn", "DDR", "DDR2")]})),
        {"mem-type": "DDR3"},
        "node",
        {},
        None,
        None,
    ),
    (
        "Exists matches",
        affinity(required({"matchExpressions": [expr("GPU", "Exists")]})),
        {"GPU": "NVIDIA-GRID-K1"},
        "node",
        {},
        None,
        None,
    ),
    (
        "affinity does not match",
        affinity(required({"matchExpressions": [expr("foo", "In", "value1", "value2")]})),
        {"foo": "bar"},
        "node",
        {},
        None,
        REASON_POD,
    ),
    (
        "empty MatchExpressions matches nothing",
        affinity(required({"matchExpressions": []})),
        {"foo": "bar"},
        "node",
        {},
        None,
        REASON_POD,
    ),
    ("no affinity", {}, {"foo": "bar"}, "node", {}, SKIP, None),
    (
        "affinity but nil NodeSelector",
        affinity({"requiredDuringSchedulingIgnoredDuringExecution": None}),
        {"foo": "bar"},
        "node",
        {},
        SKIP,
        None,
    ),
    (
        "ANDed expressions match",
        affinity(
            required(
                {"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")]}
            )
        ),
        {"GPU": "NVIDIA-GRID-K1"},
        "node",
        {},
        None,
        None,
    ),
    (
        "ANDed expressions do not match",
        affinity(
            required(
                {"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")]}
            )
        ),
        {"GPU": "NVIDIA-GRID-K1"},
        "node",
        {},
        None,
        REASON_POD,
    ),
    (
        "ORed terms match",
        affinity(
            required(
                {"matchExpressions": [expr("foo", "In", "bar", "value2")]},
                {"matchExpressions": [expr("diffkey", "In", "wrong", "value2")]},
            )
        ),
        {"foo": "bar"},
        "node",
        {},
        None,
        None,
    ),
    (
        "affinity and nodeSelector both satisfied",
        {
            "nodeSelector": {"foo": "bar"},
            **affinity(required({"matchExpressions": [expr("foo", "Exists")]})),
        },
        {"foo": "bar"},
        "node",
        {},
        None,
        None,
    ),
    (
        "affinity matches but nodeSelector does not",
        {
            "nodeSelector": {"foo": "bar"},
            **affinity(required({"matchExpressions": [expr("foo", "Exists")]})),
        },
        {"foo": "barrrrrr"},
        "node",
        {},
        None,
        REASON_POD,
    ),
    (
        "invalid value in a term",
        affinity(required({"matchExpressions": [expr("foo", "NotIn", "invalid value: ___@#$%^")]})),
        {"foo": "bar"},
        "node",
        {},
        None,
        REASON_POD,
    ),
    (
        "matchFields In matches",
        affinity(required({"matchFields": [name_in("node1")]})),
        {},
        "node1",
        {},
        None,
        None,
    ),
    (
        "matchFields In does not match",
        affinity(required({"matchFields": [name_in("node1")]})),
        {},
        "node2",
        {},
        None,
        REASON_POD,
    ),
    (
        "two terms: fields miss, expressions match",
        affinity(
            required(
                {"matchFields": [name_in("node1"), name_in("node2")]},
                {"matchExpressions": [expr("foo", "In", "bar")]},
            )
        ),
        {"foo": "bar"},
        "node2",
        {},
        None,
        None,
    ),
    (
        "one term: fields miss, expressions match",
        affinity(
            required(
                {"matchFields": [name_in("node1")], "matchExpressions": [expr("foo", "In", "bar")]}
            )
        ),
        {"foo": "bar"},
        "node2",
        {},
        None,
        REASON_POD,
    ),
    (
        "one term: both match",
        affinity(
            required(
                {"matchFields": [name_in("node1")], "matchExpressions": [expr("foo", "In", "bar")]}
            )
        ),
        {"foo": "bar"},
        "node1",
        {},
        None,
        None,
    ),
    (
        "two terms: neither matches",
        affinity(
            required(
                {"matchFields": [name_in("node1")]},
                {"matchExpressions": [expr("foo", "In", "not-match-to-bar")]},
            )
        ),
        {"foo": "bar"},
        "node2",
        {},
        None,
        REASON_POD,
    ),
    (
        "two terms of node.Name affinity",
        affinity(
            required({"matchFields": [name_in("node1")]}, {"matchFields": [name_in("node2")]})
        ),
        {},
        "node2",
        {},
        None,
        None,
    ),
    (
        "conflicting matchFields",
        affinity(required({"matchFields": [name_in("node1"), name_in("node2")]})),
        {"foo": "bar"},
        "node2",
        {},
        REASON_CONFLICT,
        REASON_POD,
    ),
    (
        "added and pod affinity match",
        affinity(required({"matchExpressions": [expr("zone", "In", "foo")]})),
        {"zone": "foo"},
        "node2",
        added(required({"matchFields": [name_in("node2")]})),
        None,
        None,
    ),
    (
        "added matches, pod affinity does not",
        affinity(required({"matchExpressions": [expr("zone", "In", "bar")]})),
        {"zone": "foo"},
        "node2",
        added(required({"matchFields": [name_in("node2")]})),
        None,
        REASON_POD,
    ),
    (
        "added affinity does not match",
        {},
        {"zone": "foo"},
        "node2",
        added(required({"matchExpressions": [expr("zone", "In", "bar")]})),
        None,
        REASON_ENFORCED,
    ),
]


@pytest.mark.parametrize(
    ("spec", "labels", "node_name", "args", "want_pre_filter", "want_reason"),
    [c[1:] for c in FILTER_CASES],
    ids=[c[0] for c in FILTER_CASES],
)
def test_filter(
    spec: dict[str, Any],
    labels: dict[str, str],
    node_name: str,
    args: dict[str, Any],
    want_pre_filter: str | None,
    want_reason: str | None,
) -> None:
    cycle = cycle_for([make_node(node_name, {"cpu": 1000}, labels=labels)], spec)
    plugin = NodeAffinity(args)
    pre = plugin.pre_filter(cycle)
    if want_pre_filter is None:
        assert pre.ok
    elif want_pre_filter == SKIP:
        assert pre.code == Code.SKIP
    else:
        assert pre == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want_pre_filter,))
    status = plugin.filter(cycle).status(0)
    if want_reason is None:
        assert status.ok
    else:
        assert status == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want_reason,))


def test_filter_without_pre_filter_still_matches() -> None:
    spec = affinity(
        required({"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD")]})
    )
    nodes = [make_node("a", labels={"GPU": "NVIDIA"}), make_node("b", labels={"GPU": "AMD"})]
    result = NodeAffinity({}).filter(cycle_for(nodes, spec))
    assert [result.status(i).message for i in range(2)] == [None, REASON_POD]


def test_invalid_added_affinity_fails_plugin_construction() -> None:
    args = added(required({"matchExpressions": [expr("zone", "Foo", "a")]}))
    with pytest.raises(
        SelectorError, match=r"nodeSelectorTerms\[0\]\.matchExpressions\[0\]\.operator"
    ):
        NodeAffinity(args)


# -- Score (TestNodeAffinityPriority) -----------------------------------------------------------

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}
AFFINITY1 = preferred((2, [expr("foo", "In", "bar")]))
AFFINITY2 = preferred(
    (2, [expr("foo", "In", "bar")]),
    (4, [expr("key", "In", "value")]),
    (5, [expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1")]),
)

SCORE_CASES = [
    ("nil affinity: all the same", {}, [LABEL1, LABEL2, LABEL3], {}, False, [0, 0, 0]),
    ("no node matches", affinity(AFFINITY1), [LABEL4, LABEL2, LABEL3], {}, True, [0, 0, 0]),
    ("only node1 matches", affinity(AFFINITY1), [LABEL1, LABEL2, LABEL3], {}, True, [100, 0, 0]),
    (
        "different priorities",
        affinity(AFFINITY2),
        [LABEL1, LABEL5, LABEL2],
        {},
        True,
        [18, 100, 36],
    ),
    ("added affinity", {}, [LABEL1, LABEL2], added(AFFINITY1), True, [100, 0]),
    (
        "added affinity and pod affinity",
        affinity(AFFINITY1),
        [LABEL1, LABEL2, LABEL5],
        added(preferred((3, [expr("key", "In", "value")]))),
        True,
        [40, 60, 100],
    ),
    ("without PreScore", affinity(AFFINITY2), [LABEL1, LABEL5, LABEL2], {}, False, [18, 100, 36]),
]


@pytest.mark.parametrize(
    ("spec", "labels", "args", "run_pre_score", "want"),
    [c[1:] for c in SCORE_CASES],
    ids=[c[0] for c in SCORE_CASES],
)
def test_score(
    spec: dict[str, Any],
    labels: list[dict[str, str]],
    args: dict[str, Any],
    run_pre_score: bool,
    want: list[int],
) -> None:
    nodes = [make_node(f"node{i + 1}", {"cpu": 1000}, labels=lbl) for i, lbl in enumerate(labels)]
    cycle = cycle_for(nodes, spec)
    plugin = NodeAffinity(args)
    feasible = np.arange(len(nodes), dtype=np.int64)
    if run_pre_score:
        assert plugin.pre_score(cycle, feasible).ok
    assert plugin.normalize(cycle, plugin.score(cycle, feasible)).tolist() == want


def test_pre_score_skips_without_preferred_terms() -> None:
    cycle = cycle_for([make_node("node1", labels=LABEL1)], {})
    assert NodeAffinity({}).pre_score(cycle, np.arange(1)).code == Code.SKIP


def test_pre_score_errors_on_a_broken_preferred_term() -> None:
    spec = affinity(preferred((2, [expr("invalid key", "In", "bar")])))
    cycle = cycle_for([make_node("node1", labels=LABEL1)], spec)
    plugin = NodeAffinity({})
    status = plugin.pre_score(cycle, np.arange(1))
    assert status.code == Code.ERROR
    assert status.message == (
        '[0].matchExpressions[0].key: Invalid value: "invalid key": name part must consist of '
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
        "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    )
    with pytest.raises(PluginError):  # Score without PreScore fails the same way
        NodeAffinity({}).score(cycle_for([make_node("node1")], spec), np.arange(1))


def test_explain_names_matched_terms_and_weights() -> None:
    spec = {
        "nodeSelector": {"foo": "bar"},
        **affinity({**AFFINITY2, **required({"matchExpressions": [expr("az", "Exists")]})}),
    }
    nodes = [make_node("node1", labels=LABEL1), make_node("node5", labels=LABEL5)]
    cycle = cycle_for(nodes, spec)
    plugin = NodeAffinity({})
    detail = plugin.explain(cycle, 0)
    assert detail is not None
    assert detail["nodeSelectorMismatches"] == {}
    assert detail["requiredTerms"] == [
        {"index": 0, "matched": False, "requirements": ["az"], "nodeLabels": {"az": None}}
    ]
    assert [(t["weight"], t["matched"]) for t in detail["preferredTerms"]] == [
        (2, True),
        (4, False),
        (5, False),
    ]
    assert plugin.explain(cycle, 1)["requiredTerms"][0]["matched"] is True  # type: ignore[index]


# -- vectorization --------------------------------------------------------------------------------


def reference_node(
    labels: Mapping[str, str],
    selector: Mapping[str, str],
    zones: set[str],
    weights: Mapping[str, int],
) -> tuple[bool, int]:
    """Per-node reference: nodeSelector AND (zone In zones OR disk Exists); score by tier."""
    fits = all(labels.get(k) == v for k, v in selector.items())
    fits = fits and (labels.get("zone") in zones or "disk" in labels)
    return fits, sum(w for tier, w in weights.items() if labels.get("tier") == tier)


def test_vectorized_plugin_equals_per_node_reference() -> None:
    rng = random.Random(7)
    nodes, all_labels = [], []
    for i in range(400):
        labels = {"zone": rng.choice("abcd"), "tier": rng.choice(["web", "db", "batch"])}
        if rng.random() < 0.2:
            labels["disk"] = "ssd"
        if rng.random() < 0.5:
            labels["pool"] = rng.choice(["p1", "p2"])
        nodes.append(make_node(f"n{i}", {"cpu": 1000}, labels=labels))
        all_labels.append({**labels, "kubernetes.io/hostname": f"n{i}"})
    selector, zones, weights = {"pool": "p1"}, {"a", "c"}, {"web": 7, "db": 3}
    terms = [
        {"matchExpressions": [expr("zone", "In", *sorted(zones))]},
        {"matchExpressions": [expr("disk", "Exists")]},
    ]
    spec = {
        "nodeSelector": selector,
        **affinity(
            {
                **required(*terms),
                **preferred(*[(w, [expr("tier", "In", t)]) for t, w in weights.items()]),
            }
        ),
    }
    cycle = cycle_for(nodes, spec)
    plugin = NodeAffinity({})
    want = [reference_node(lbl, selector, zones, weights) for lbl in all_labels]
    assert plugin.filter(cycle).passed.tolist() == [fits for fits, _ in want]
    feasible = np.arange(len(nodes), dtype=np.int64)
    plugin.pre_score(cycle, feasible)
    assert plugin.score(cycle, feasible).tolist() == [score for _, score in want]


# -- through the CLI ------------------------------------------------------------------------------


def test_cli_reports_filter_reasons_and_normalized_scores(tmp_path: Path) -> None:
    nodes = [
        make_node(
            "node1", {"cpu": 4000, "memory": 8 << 30, "pods": 110}, labels={"zone": "a", **LABEL1}
        ),
        make_node(
            "node2", {"cpu": 4000, "memory": 8 << 30, "pods": 110}, labels={"zone": "a", **LABEL5}
        ),
        make_node("node3", {"cpu": 4000, "memory": 8 << 30, "pods": 110}, labels={"zone": "b"}),
    ]
    spec = {
        "containers": [{"name": "c", "image": "x"}],
        **affinity({**required({"matchExpressions": [expr("zone", "In", "a")]}), **AFFINITY2}),
    }
    pod = make_pod("web", spec=spec)
    config = only_plugin_config(
        "NodeAffinity", ("preFilter", "filter", "preScore", "score"), weight=2
    )
    decision = evaluate(tmp_path, nodes, pod, config=config)
    assert plugin_filter(decision, "node3", "NodeAffinity") == {
        "plugin": "NodeAffinity",
        "code": "UnschedulableAndUnresolvable",
        "reason": REASON_POD,
    }
    first, second = (
        plugin_score(decision, "node1", "NodeAffinity"),
        plugin_score(decision, "node2", "NodeAffinity"),
    )
    assert first is not None and second is not None
    assert (first["raw"], first["normalized"], first["weighted"]) == (2, 18, 36)
    assert (second["raw"], second["normalized"]) == (11, 100)
    assert decision["selectedNode"] == "node2"


def test_cli_enforces_added_affinity_and_reports_pre_score_errors(tmp_path: Path) -> None:
    nodes = [
        make_node(n, {"cpu": 4000, "pods": 110}, labels={"zone": z})
        for n, z in (("a", "x"), ("b", "y"), ("c", "z"))
    ]
    broken = affinity(preferred((1, [expr("zone", "In", "x")]), (2, [expr("bad key", "In", "y")])))
    pod = make_pod("web", spec={"containers": [{"name": "c", "image": "x"}], **broken})
    args = added(required({"matchExpressions": [expr("zone", "NotIn", "y")]}))
    points = ("preFilter", "filter", "preScore", "score")
    decision = evaluate(
        tmp_path, nodes, pod, config=only_plugin_config("NodeAffinity", points, args=args)
    )
    assert plugin_filter(decision, "b", "NodeAffinity")["reason"] == REASON_ENFORCED
    assert plugin_filter(decision, "a", "NodeAffinity")["code"] == "Success"
    assert decision["selectedNode"] is None
    assert decision["error"].startswith(
        'running PreScore plugin "NodeAffinity": '
        '[1].matchExpressions[0].key: Invalid value: "bad key"'
    )
