"""scoring.selectors: node-selector and label-selector matching over a snapshot.

Cases come from k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity_test.go
(TestNodeSelectorMatch, TestPreferredSchedulingTermsScore, TestNodeSelectorRequirementsAsSelector,
TestPodMatchesNodeSelectorAndAffinityTerms) and k8s.io/apimachinery/pkg/labels/selector_test.go
(requirement validation), plus a randomized comparison with a per-node reference.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from scoring.errors import INVALID, NOT_SUPPORTED, FieldError
from scoring.goint import parse_int64
from scoring.selectors import (
    Requirement,
    SelectorError,
    aggregate_message,
    describe_error,
    match_label_selector,
    match_labels,
    match_node_selector_terms,
    parse_node_selector_terms,
    parse_preferred_terms,
    preferred_score,
    requirement_mask,
    terms_mask,
)
from scoring.snapshot import Snapshot
from tests.scoring.builders import make_node

KEY_DETAIL = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def snapshot_of(*nodes: tuple[str, Mapping[str, str]]) -> Snapshot:
    return Snapshot.from_objects(
        [make_node(name, {"cpu": 1000}, labels=lbl) for name, lbl in nodes]
    )


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        out["values"] = list(values)
    return out


def field(operator: str, *values: str, key: str = "metadata.name") -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


# -- NodeSelector -----------------------------------------------------------------------------

SELECTOR_MATCH_CASES: list[tuple[str, Any, tuple[str, dict[str, str]], bool]] = [
    (
        "node matches field selector, but not labels",
        [
            {
                "matchExpressions": [expr("label_1", "In", "label_1_val")],
                "matchFields": [field("In", "host_1")],
            }
        ],
        ("host_1", {}),
        False,
    ),
    (
        "node matches field selector and label selector",
        [
            {
                "matchExpressions": [expr("label_1", "In", "label_1_val")],
                "matchFields": [field("In", "host_1")],
            }
        ],
        ("host_1", {"label_1": "label_1_val"}),
        True,
    ),
    (
        "second term matches",
        [
            {"matchExpressions": [expr("label_1", "In", "label_1_val")]},
            {"matchFields": [field("In", "host_1")]},
        ],
        ("host_1", {}),
        True,
    ),
    ("nil []NodeSelectorTerm matches nothing", None, ("n", {"foo": "bar"}), False),
    ("empty []NodeSelectorTerm matches nothing", [], ("n", {"foo": "bar"}), False),
    (
        "empty matchExpressions term matches nothing",
        [{"matchExpressions": []}],
        ("n", {"foo": "bar"}),
        False,
    ),
    (
        "In matches",
        [{"matchExpressions": [expr("foo", "In", "bar", "value2")]}],
        ("n", {"foo": "bar"}),
        True,
    ),
    (
        "In does not match",
        [{"matchExpressions": [expr("foo", "In", "value1", "value2")]}],
        ("n", {"foo": "bar"}),
        False,
    ),
    (
        "Gt with leading zeros",
        [{"matchExpressions": [expr("kernel-version", "Gt", "0204")]}],
        ("n", {"kernel-version": "0206"}),
        True,
    ),
    (
        "NotIn matches",
        [{"matchExpressions": [expr("mem-type", "NotIn", "DDR", "DDR2")]}],
        ("n", {"mem-type": "DDR3"}),
        True,
    ),
    (
        "NotIn matches a node without the label",
        [{"matchExpressions": [expr("mem-type", "NotIn", "DDR")]}],
        ("n", {}),
        True,
    ),
    (
        "Exists matches",
        [{"matchExpressions": [expr("GPU", "Exists")]}],
        ("n", {"GPU": "NVIDIA-GRID-K1"}),
        True,
    ),
    (
        "DoesNotExist",
        [{"matchExpressions": [expr("GPU", "DoesNotExist")]}],
        ("n", {"GPU": "x"}),
        False,
    ),
    (
        "requirements are ANDed",
        [{"matchExpressions": [expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")]}],
        ("n", {"GPU": "NVIDIA-GRID-K1"}),
        False,
    ),
    (
        "terms are ORed",
        [
            {"matchExpressions": [expr("foo", "In", "bar")]},
            {"matchExpressions": [expr("diffkey", "In", "wrong")]},
        ],
        ("n", {"foo": "bar"}),
        True,
    ),
    (
        "an unparsable term never matches but the others still do",
        [
            {"matchExpressions": [expr("foo", "NotIn", "invalid value: ___@#$%^")]},
            {"matchExpressions": [expr("foo", "Exists")]},
        ],
        ("n", {"foo": "bar"}),
        True,
    ),
    ("field NotIn", [{"matchFields": [field("NotIn", "host_1")]}], ("host_2", {}), True),
    (
        "unknown field reads as empty",
        [{"matchFields": [field("In", "", key="spec.unknown")]}],
        ("n", {}),
        True,
    ),
    (
        "unknown field is not a name",
        [{"matchFields": [field("In", "n", key="spec.unknown")]}],
        ("n", {}),
        False,
    ),
]


@pytest.mark.parametrize(
    ("terms", "node", "want"),
    [c[1:] for c in SELECTOR_MATCH_CASES],
    ids=[c[0] for c in SELECTOR_MATCH_CASES],
)
def test_node_selector_terms_match(
    terms: Any, node: tuple[str, Mapping[str, str]], want: bool
) -> None:
    snapshot = snapshot_of(node)
    parsed = parse_node_selector_terms(terms)  # lazy errors, as the scheduler reads pods
    assert terms_mask(snapshot, parsed).tolist() == [want]


def test_node_selector_errors_name_fields_like_upstream() -> None:
    terms = [
        {"matchFields": [field("In", "host_1", "host_2")]},
        {
            "matchExpressions": [expr("label_1", "In", "label_1_val")],
            "matchFields": [field("In", "host_1")],
        },
        {"matchExpressions": [expr("invalid key", "In", "label_value")]},
    ]
    with pytest.raises(SelectorError) as caught:
        match_node_selector_terms(snapshot_of(("host_1", {})), terms)
    got = [(e.field, e.type, e.detail) for e in caught.value.errors]
    assert got == [
        ("nodeSelectorTerms[0].matchFields[0].values", INVALID, "must have one element"),
        ("nodeSelectorTerms[2].matchExpressions[0].key", INVALID, KEY_DETAIL),
    ]
    message = str(caught.value)
    assert message.startswith("[nodeSelectorTerms[0].matchFields[0].values: Invalid value: ")
    assert 'nodeSelectorTerms[2].matchExpressions[0].key: Invalid value: "invalid key": ' in message


REQUIREMENT_ERROR_CASES = [
    (
        expr("foo", "Exists", "bar", "baz"),
        "root[0].values",
        "values set must be empty for exists and does not exist",
    ),
    (expr("foo", "In"), "root[0].values", "for 'in', 'notin' operators, values set can't be empty"),
    (
        expr("foo", "Gt"),
        "root[0].values",
        "for 'Gt', 'Lt' operators, exactly one value is required",
    ),
    (
        expr("foo", "Gt", "1", "2"),
        "root[0].values",
        "for 'Gt', 'Lt' operators, exactly one value is required",
    ),
    (
        expr("foo", "Lt", "bar"),
        "root[0].values[0]",
        "for 'Gt', 'Lt' operators, the value must be an integer",
    ),
    (expr("foo", "In", "a b"), "root[0].values[0][foo]", None),
    # a negative bound parses as an integer but is not a valid label value
    (expr("foo", "Gt", "-1"), "root[0].values[0][foo]", None),
]


@pytest.mark.parametrize(("requirement", "where", "detail"), REQUIREMENT_ERROR_CASES)
def test_requirement_validation(
    requirement: dict[str, Any], where: str, detail: str | None
) -> None:
    (term,) = parse_node_selector_terms([{"matchExpressions": [requirement]}], "root")
    errors = [e for e in term.errors if e.field.replace("[0].matchExpressions", "") == where]
    assert errors, term.errors
    assert errors[0].type == INVALID
    if detail is not None:
        assert errors[0].detail == detail
    else:
        assert errors[0].detail.startswith("a valid label must be an empty string")


def test_unsupported_operator_lists_the_supported_ones() -> None:
    (term,) = parse_node_selector_terms([{"matchExpressions": [expr("foo", "Foo", "x")]}])
    (err,) = term.errors
    assert (err.field, err.type) == (
        "nodeSelectorTerms[0].matchExpressions[0].operator",
        NOT_SUPPORTED,
    )
    assert err.detail == 'supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'
    (term,) = parse_node_selector_terms([{"matchFields": [field("Exists")]}])
    assert term.errors[0].detail == 'supported values: "In", "NotIn"'


# -- PreferredSchedulingTerms -----------------------------------------------------------------


def test_preferred_terms_score_sums_matching_weights() -> None:
    terms = [
        {"weight": 5, "preference": {"matchFields": [field("In", "host_1")]}},
        {
            "weight": 7,
            "preference": {"matchExpressions": [expr("unknown_label", "In", "unknown_label_val")]},
        },
        {"weight": 11, "preference": {"matchExpressions": [expr("label_1", "In", "label_1_val")]}},
    ]
    parsed, errors = parse_preferred_terms(terms)
    assert errors == []
    snapshot = snapshot_of(("host_1", {"label_1": "label_1_val"}), ("host_2", {"label_1": "x"}))
    assert preferred_score(snapshot, parsed).tolist() == [16, 0]


def test_preferred_terms_errors_have_no_preference_in_path() -> None:
    terms = [
        {"weight": 1, "preference": {"matchFields": [field("In", "host_1", "host_2")]}},
        {
            "weight": 1,
            "preference": {
                "matchExpressions": [expr("label_1", "In", "v")],
                "matchFields": [field("In", "h")],
            },
        },
        {
            "weight": 1,
            "preference": {"matchExpressions": [expr("invalid key", "In", "label_value")]},
        },
    ]
    _, errors = parse_preferred_terms(terms)
    assert [(e.field, e.detail) for e in errors] == [
        ("[0].matchFields[0].values", "must have one element"),
        ("[2].matchExpressions[0].key", KEY_DETAIL),
    ]


def test_zero_weight_terms_are_not_even_parsed() -> None:
    terms = [{"weight": 0, "preference": {"matchFields": [field("In", "host_1", "host_2")]}}]
    assert parse_preferred_terms(terms) == ([], [])


# -- Gt / Lt ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("0206", 206),
        ("+5", 5),
        ("-12", -12),
        ("9223372036854775807", 2**63 - 1),
        ("9223372036854775808", None),
        ("4Gi", None),
        ("1.5", None),
        (" 5", None),
        ("1_0", None),
        ("", None),
    ],
)
def test_go_parse_int(text: str, value: int | None) -> None:
    assert parse_int64(text) == value


def test_gt_lt_compare_integers_and_skip_non_integers() -> None:
    snapshot = snapshot_of(
        ("a", {"cores": "8"}),
        ("b", {"cores": "08"}),
        ("c", {"cores": "4Gi"}),
        ("d", {}),
        ("e", {"cores": "-3"}),
        ("f", {"cores": "4"}),
    )
    gt = requirement_mask(snapshot, Requirement("cores", "Gt", ("4",)))
    lt = requirement_mask(snapshot, Requirement("cores", "Lt", ("4",)))
    assert gt.tolist() == [True, True, False, False, False, False]
    assert lt.tolist() == [False, False, False, False, True, False]


# -- labels and metav1.LabelSelector ----------------------------------------------------------


def test_match_labels_requires_every_pair() -> None:
    snapshot = snapshot_of(
        ("a", {"foo": "bar"}), ("b", {"foo": "bar", "baz": "blah"}), ("c", {"baz": "blah"})
    )
    assert match_labels(snapshot, {"foo": "bar"}).tolist() == [True, True, False]
    assert match_labels(snapshot, {"foo": "bar", "baz": "blah"}).tolist() == [False, True, False]
    assert match_labels(snapshot, {}).tolist() == [True, True, True]


def test_label_selector_null_empty_and_combined() -> None:
    snapshot = snapshot_of(("a", {"tier": "web", "zone": "x"}), ("b", {"tier": "db"}), ("c", {}))
    assert match_label_selector(snapshot, None).tolist() == [False, False, False]
    assert match_label_selector(snapshot, {}).tolist() == [True, True, True]
    selector = {"matchLabels": {"tier": "web"}, "matchExpressions": [expr("zone", "In", "x", "y")]}
    assert match_label_selector(snapshot, selector).tolist() == [True, False, False]
    absent = {"matchExpressions": [expr("tier", "DoesNotExist")]}
    assert match_label_selector(snapshot, absent).tolist() == [False, False, True]


def test_label_selector_rejects_gt_and_names_the_field() -> None:
    snapshot = snapshot_of(("a", {}))
    with pytest.raises(SelectorError, match=r"spec\.nodeSelector\.matchExpressions\[1\]\.operator"):
        match_label_selector(
            snapshot,
            {"matchExpressions": [expr("a", "Exists"), expr("cores", "Gt", "4")]},
            "spec.nodeSelector",
        )
    with pytest.raises(SelectorError, match=r"matchLabels\[bad key\]\.key"):
        match_label_selector(snapshot, {"matchLabels": {"bad key": "v"}})


def test_aggregate_message_is_single_or_bracketed() -> None:
    one = FieldError("a", INVALID, "bad", "x")
    two = FieldError("b", NOT_SUPPORTED, 'supported values: "In"', "Foo")
    assert describe_error(one) == 'a: Invalid value: "x": bad'
    assert aggregate_message([one]) == 'a: Invalid value: "x": bad'
    assert aggregate_message([one, two, one]) == (
        '[a: Invalid value: "x": bad, b: Unsupported value: "Foo": supported values: "In"]'
    )


# -- vectorized matching equals a per-node reference --------------------------------------------


def reference_requirement(
    labels: Mapping[str, str], key: str, op: str, values: Sequence[str]
) -> bool:
    """labels.Requirement.Matches, one node at a time."""
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if key not in labels:
        return False
    try:
        have, bound = int(labels[key]), int(values[0])
    except ValueError:
        return False
    return have > bound if op == "Gt" else have < bound


def reference_terms(
    name: str, labels: Mapping[str, str], terms: Sequence[Mapping[str, Any]]
) -> bool:
    for term in terms:
        exprs, fields = term.get("matchExpressions", []), term.get("matchFields", [])
        if not exprs and not fields:
            continue
        if all(
            reference_requirement(labels, e["key"], e["operator"], e.get("values", []))
            for e in exprs
        ) and all((name == f["values"][0]) == (f["operator"] == "In") for f in fields):
            return True
    return False


def random_terms(rng: random.Random, names: Sequence[str]) -> list[dict[str, Any]]:
    keys, values = ["zone", "rack", "cores", "gpu"], ["a", "b", "c", "1", "2", "16", "x9"]
    terms = []
    for _ in range(rng.randint(0, 3)):
        exprs = []
        for _ in range(rng.randint(0, 3)):
            op = rng.choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
            if op in ("Exists", "DoesNotExist"):
                exprs.append(expr(rng.choice(keys), op))
            elif op in ("Gt", "Lt"):
                exprs.append(expr(rng.choice(keys), op, str(rng.randint(0, 20))))
            else:
                exprs.append(expr(rng.choice(keys), op, *rng.sample(values, rng.randint(1, 3))))
        fields = (
            [field(rng.choice(["In", "NotIn"]), rng.choice(names))] if rng.random() < 0.3 else []
        )
        terms.append({"matchExpressions": exprs, "matchFields": fields})
    return terms


def test_vectorized_matching_equals_per_node_reference() -> None:
    rng = random.Random(1451)
    label_pool = {
        "zone": ["a", "b", "c"],
        "rack": ["1", "2", "x9"],
        "cores": ["1", "2", "16", "08", "4Gi"],
        "gpu": ["a"],
    }
    nodes = []
    for i in range(300):
        labels = {k: rng.choice(v) for k, v in label_pool.items() if rng.random() < 0.7}
        nodes.append((f"node-{i:03d}", labels))
    snapshot = snapshot_of(*nodes)
    names = [n for n, _ in nodes]
    for _ in range(60):
        terms = random_terms(rng, names)
        got = match_node_selector_terms(snapshot, terms)
        want = [reference_terms(name, labels, terms) for name, labels in nodes]
        assert got.tolist() == want, terms
        weighted: list[dict[str, Any]] = [
            {"weight": rng.randint(1, 100), "preference": t} for t in terms
        ]
        parsed, errors = parse_preferred_terms(weighted)
        assert errors == []
        want_score = [
            sum(w["weight"] for w in weighted if reference_terms(name, labels, [w["preference"]]))
            for name, labels in nodes
        ]
        assert np.array_equal(preferred_score(snapshot, parsed), want_score)
