"""Stored explanations: encoding then decoding gives back exactly the engine's JSON, and a few
nodes can be read without the others."""

from __future__ import annotations

import json
import lzma
import random
from collections import Counter
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.engine import EXTENDED_PROFILE
from scoring import columnar, decision_codec
from scoring.config import load_configuration
from scoring.engine import Engine
from scoring.objects import parse_pod
from scoring.snapshot import Snapshot
from scoring.synthetic import generate_cluster

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
EXTENDED = EXTENDED_PROFILE  # the benchmarks' extended profile: LoadAware, LimitAware, NUMA


@pytest.fixture(scope="module")
def explanations() -> list[dict[str, Any]]:
    """The engine's JSON for every pending pod of a 40-node synthetic cluster."""
    objects = generate_cluster(nodes=40, nrt_nodes=4, pending_pods=12, seed=7, now=NOW)
    snapshot = Snapshot.from_objects(objects)
    engine = Engine(load_configuration(EXTENDED))
    return [
        engine.evaluate(parse_pod(pod.raw), snapshot, NOW).to_dict()
        for pod in snapshot.pending
        if pod.scheduler_name == "default-scheduler"
    ]


def same_json(a: Any, b: Any) -> bool:
    """Equal, and printed the same (key order, 1 against 1.0, True against 1)."""
    return a == b and json.dumps(a) == json.dumps(b)


def test_real_explanations_come_back_exactly(explanations: list[dict[str, Any]]) -> None:
    # The inputs cover what the codec must keep: every plugin's details, ties, filtered
    # nodes with different reasons, decisions where nothing fits.
    nodes = [n for e in explanations for n in e["nodes"]]
    details = Counter(plugin for n in nodes for plugin in n.get("details", {}))
    assert {"LoadAwareScheduling", "LimitAware", "NodeResourceTopologyMatch"} <= set(details)
    assert any(n["details"]["NodeResourceTopologyMatch"].get("topology") for n in nodes)
    reasons = {f["reason"] for n in nodes for f in n["filters"] if f["code"] != "Success"}
    assert len(reasons) > 5
    assert any(len(f.get("reasons", ())) > 1 for n in nodes for f in n["filters"])
    ties = [
        e
        for e in explanations
        if max(Counter(n["totalScore"] for n in e["nodes"] if n["feasible"]).values(), default=0)
        > 1
    ]
    assert ties
    assert any(e["selectedNode"] is None for e in explanations)
    for explanation in explanations:
        data = decision_codec.encode(explanation)
        assert same_json(decision_codec.decode(data), explanation)
        assert len(data) * 10 < len(json.dumps(explanation))


def test_nodes_are_read_without_the_others(explanations: list[dict[str, Any]]) -> None:
    explanation = max(explanations, key=lambda e: e["feasibleNodes"])
    stored = decision_codec.StoredExplanation(decision_codec.encode(explanation))
    nodes = explanation["nodes"]
    assert stored.node_count == len(nodes)
    assert stored.names() == [n["name"] for n in nodes]
    picked = [len(nodes) - 1, 0, 5]
    assert same_json(stored.nodes(picked), [nodes[k] for k in picked])
    assert same_json(stored.header(), {k: v for k, v in explanation.items() if k != "nodes"})
    assert same_json(stored.to_dict([2, 3]), {**explanation, "nodes": nodes[2:4]})
    assert stored.position_of(nodes[3]["name"]) == 3 and stored.position_of("nope") is None


def test_default_selection_is_the_top_ranked_plus_one_node_of_each_filtered_group(
    explanations: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(decision_codec, "DEFAULT_RANKED", 3)
    explanation = max(explanations, key=lambda e: e["feasibleNodes"])
    nodes = explanation["nodes"]
    selection = decision_codec.StoredExplanation(decision_codec.encode(explanation)).select()
    ranked = [k for k, n in enumerate(nodes) if n["feasible"]]
    filtered = [k for k, n in enumerate(nodes) if not n["feasible"]]
    assert selection.ranked == len(ranked) > 3 and selection.total == len(nodes)
    signatures = {
        k: [
            (f["plugin"], f["code"], f["reason"])
            for f in nodes[k]["filters"]
            if f["code"] != "Success"
        ]
        for k in filtered
    }
    assert sum(g.count for g in selection.groups) == len(filtered)
    assert len(selection.groups) == len({tuple(s) for s in signatures.values()}) > 1
    for group in selection.groups:
        assert list(group.failures) == signatures[group.first]
        assert group.first == min(k for k in filtered if signatures[k] == signatures[group.first])
    assert selection.positions == sorted(ranked[:3] + [g.first for g in selection.groups])
    assert selection.omitted == len(nodes) - len(selection.positions)
    page = decision_codec.StoredExplanation(decision_codec.encode(explanation)).select(4, 5)
    assert page.positions == [4, 5, 6, 7, 8]


def test_odd_explanations_come_back_exactly() -> None:
    cases: list[dict[str, Any]] = [
        {},
        {"pod": "a/b", "nodes": []},
        {"nodes": [], "selectedNode": None, "message": "0/0 nodes are available: ."},
        {
            "pod": "ns/ünïcødé",
            "selectedNode": None,
            "nodes": [
                {
                    "name": f"n-{k:04d}",
                    "feasible": False,
                    "filters": [
                        {"plugin": "P", "code": "Unschedulable", "reason": "节点 ☃ \ud800 full"},
                        {"plugin": "Q", "code": "Success", "reason": None},
                    ],
                    "scores": [],
                    "totalScore": None,
                }
                for k in range(30)
            ],
        },
        {"nodes": [{"name": "x", "totalScore": None, "scores": [{"raw": None}]}]},
        {"nodes": [{"v": -0.0}, {"v": 0.1}, {"v": 1e300}, {"v": 5e-324}, {"v": 2**70}]},
        {"nodes": [{"v": -(2**63)}, {"v": 2**63 - 1}, {"v": True}, {"v": 1}, {"v": 1.0}]},
        {
            "nodes": [{"s": f"cpu {k}% of 0{k} ({k * 7}/10)"} for k in range(40)]
            + [{"s": "a\x00"}, {"s": "b\x01A7"}]
        },
    ]
    for explanation in cases:
        assert same_json(decision_codec.decode(decision_codec.encode(explanation)), explanation)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)
similar_records = st.lists(
    st.fixed_dictionaries(
        {"name": st.from_regex(r"node-[0-9]{1,4}", fullmatch=True)},
        optional={"v": json_values, "n": st.integers(0, 300), "f": st.floats(0, 1).map(round)},
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_any_json_value_comes_back_exactly(value: Any) -> None:
    assert same_json(columnar.unpack(columnar.pack([value])).take(), [value])


@settings(max_examples=100, deadline=None)
@given(similar_records, st.data())
def test_any_rows_of_similar_records_come_back(records: list[Any], data: st.DataObject) -> None:
    column = columnar.unpack(columnar.pack(records))
    assert same_json(column.take(), records)
    rows = data.draw(st.lists(st.integers(0, max(0, len(records) - 1)), max_size=10))
    if records:
        assert same_json(column.take(rows), [records[r] for r in rows])
        assert column.field("v", rows) == [records[r].get("v") for r in rows]


def test_values_that_are_not_json_are_refused_by_path() -> None:
    with pytest.raises(columnar.ColumnarError, match=r"\$\.nodes\[\]\.details: a set"):
        decision_codec.encode({"nodes": [{"details": {1, 2}}]})
    with pytest.raises(columnar.ColumnarError, match="key 3 is not a string"):
        decision_codec.encode({"nodes": [{3: "x"}]})


def test_bytes_that_are_not_an_explanation_are_refused() -> None:
    data = decision_codec.encode({"nodes": [{"name": "a"}]})
    for bad in (b"", b"{}", data[:-5], data[:4] + b"garbage"):
        with pytest.raises(decision_codec.ExplanationDataError):
            decision_codec.decode(bad)


def test_derived_columns_are_stored_as_what_their_prediction_misses() -> None:
    rng = random.Random(5)
    records = []
    for _ in range(500):
        allocatable = rng.choice([3900, 7880, 15840, 31760])
        used = rng.randrange(0, allocatable)
        records.append(
            {
                "allocatable": allocatable,
                "used": used,
                "percent": round(used * 100 / allocatable),  # within 1 of the floor
                "free": (allocatable - used) * 100 // allocatable,
                "ratio": round(used / allocatable, 4),
                "again": used * 3 + 7,  # a linear image of "used"
                "summary": f"cpu {round(used * 100 / allocatable)}% of {allocatable}",
            }
        )
    packed = columnar.pack(records)
    assert same_json(columnar.unpack(packed).take(), records)
    shuffled = [dict(r) for r in records]
    derived = [(r["percent"], r["free"], r["ratio"], r["again"]) for r in records]
    rng.shuffle(derived)
    for record, (percent, free, ratio, again) in zip(shuffled, derived, strict=True):
        record.update(percent=percent, free=free, ratio=ratio, again=again)
    # Same values, no longer derivable from their row: these cost their full size.
    assert len(lzma.compress(packed)) * 2 < len(lzma.compress(columnar.pack(shuffled)))


def test_nodes_are_stored_by_name_and_read_back_in_the_engines_order(
    explanations: list[dict[str, Any]],
) -> None:
    for explanation in explanations:
        packed = decision_codec.pack(explanation)
        assert packed.flags & decision_codec.BY_NAME
        stored_names = columnar.unpack(packed.payload).take()[0]["nodes"]
        assert [n["name"] for n in stored_names] == sorted(n["name"] for n in explanation["nodes"])
        stored = decision_codec.StoredExplanation(decision_codec.encode(packed))
        assert stored.names() == [n["name"] for n in explanation["nodes"]]
        assert same_json(stored.to_dict(), explanation)
        picked = [len(explanation["nodes"]) - 1, 0]
        assert same_json(stored.nodes(picked), [explanation["nodes"][k] for k in picked])


def test_an_order_the_rule_does_not_give_is_stored_as_it_is(
    explanations: list[dict[str, Any]],
) -> None:
    explanation = max(explanations, key=lambda e: e["feasibleNodes"])
    swapped = list(explanation["nodes"])
    swapped[0], swapped[1] = swapped[1], swapped[0]  # no longer best first
    odd = {**explanation, "nodes": swapped}
    assert decision_codec.pack(odd).flags == 0
    assert same_json(decision_codec.decode(decision_codec.encode(odd)), odd)
    stored = decision_codec.StoredExplanation(decision_codec.encode(odd))
    assert stored.names()[:2] == [swapped[0]["name"], swapped[1]["name"]]


def test_decisions_on_one_snapshot_share_a_base(explanations: list[dict[str, Any]]) -> None:
    base = decision_codec.Base(decision_codec.pack(explanations[0]).payload)
    restored = decision_codec.Base.from_bytes(base.to_bytes())
    assert restored.digest == base.digest and restored.payload == base.payload
    for explanation in explanations:
        alone = decision_codec.encode(explanation)
        shared = decision_codec.encode(explanation, base)
        assert decision_codec.base_digest(shared) == base.digest
        assert decision_codec.base_digest(alone) is None
        assert same_json(decision_codec.decode(shared, restored), explanation)
        assert len(shared) < len(alone)
    first = decision_codec.encode(explanations[0], base)
    assert len(first) * 20 < len(decision_codec.encode(explanations[0]))


def test_a_decision_needs_the_base_it_was_made_with(explanations: list[dict[str, Any]]) -> None:
    base = decision_codec.Base(decision_codec.pack(explanations[0]).payload)
    other = decision_codec.Base(decision_codec.pack(explanations[1]).payload)
    data = decision_codec.encode(explanations[2], base)
    with pytest.raises(decision_codec.ExplanationDataError, match="needs its base"):
        decision_codec.decode(data)
    with pytest.raises(decision_codec.ExplanationDataError, match="another base"):
        decision_codec.decode(data, other)
    with pytest.raises(decision_codec.ExplanationDataError, match="not an explanation base"):
        decision_codec.Base.from_bytes(data)


def test_format_1_is_still_read(explanations: list[dict[str, Any]]) -> None:
    explanation = explanations[-1]
    data = decision_codec.MAGIC_V1 + lzma.compress(columnar.pack([explanation]))
    stored = decision_codec.StoredExplanation(data)
    assert same_json(stored.to_dict(), explanation)
    assert stored.names() == [n["name"] for n in explanation["nodes"]]
