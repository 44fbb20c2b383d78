"""Node-selector and label-selector matching, vectorized over a snapshot's label columns.

One selector is evaluated against every node at once: each requirement becomes a boolean lookup
table over the label's distinct values (``Snapshot.label_column``), indexed by the per-node value
codes. Semantics follow upstream exactly:

- ``NodeSelector`` / ``PreferredSchedulingTerms``:
  k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go. Terms are ORed, the
  requirements of a term ANDed; an empty term (no expressions, no fields) is dropped, so an empty
  term list matches nothing; a term with a parse error never matches, while the other terms still
  do ("lazy" errors, as the scheduler reads pods).
- Requirements: k8s.io/apimachinery/pkg/labels/selector.go (``NewRequirement`` validation,
  ``Requirement.Matches``). ``Gt``/``Lt`` parse both sides with ``strconv.ParseInt(s, 10, 64)``:
  a label value that is not an int64 (``"4Gi"``, ``"1.5"``) never matches; ``"0206"`` is 206.
- ``matchFields``: only ``metadata.name`` has a value; any other field key reads as ``""``
  (``fields.Set.Get``), so ``In [""]`` matches every node.
- ``metav1.LabelSelector``: ``LabelSelectorAsSelector`` (k8s.io/apimachinery/pkg/apis/meta/v1/
  helpers.go): null selects nothing, ``{}`` selects everything, no ``Gt``/``Lt``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from scoring import field_errors as fe
from scoring.errors import INVALID, NOT_SUPPORTED, REQUIRED, FieldError, InputError
from scoring.goint import parse_int64
from scoring.k8s_names import is_label_key, is_label_value
from scoring.snapshot import BoolArray, IntArray, LabelColumn, Snapshot

NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
FIELD_SELECTOR_OPERATORS = ("In", "NotIn")
LABEL_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NAME_FIELD = "metadata.name"

_INTEGER_LABELS = "selectors:integer-labels"


# -- parsed selectors -------------------------------------------------------------------------


@dataclass(frozen=True)
class Requirement:
    """One ``key operator values`` requirement (labels, or a node field for ``matchFields``)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def __str__(self) -> str:
        """Readable form after ``labels.Requirement.String``: ``zone in (a,b)``, ``!gpu``."""
        joined = ",".join(sorted(self.values))
        match self.operator:
            case "Exists":
                return self.key
            case "DoesNotExist":
                return f"!{self.key}"
            case "In" | "NotIn":
                return f"{self.key} {self.operator.lower()} ({joined})"
            case "Gt":
                return f"{self.key}>{joined}"
            case "Lt":
                return f"{self.key}<{joined}"
            case _:
                return f"{self.key}={joined}"


@dataclass(frozen=True)
class SelectorTerm:
    """A parsed ``NodeSelectorTerm``; ``index`` is its position in the list it came from."""

    index: int
    expressions: tuple[Requirement, ...]
    fields: tuple[Requirement, ...] = ()
    errors: tuple[FieldError, ...] = ()

    @cached_property
    def text(self) -> tuple[str, ...]:
        """Readable requirements, for explanations."""
        return tuple(str(r) for r in (*self.expressions, *self.fields))


@dataclass(frozen=True)
class WeightedTerm:
    """A parsed ``PreferredSchedulingTerm``."""

    weight: int
    term: SelectorTerm


class SelectorError(InputError):
    """A selector upstream would refuse to parse; carries every field error found."""

    def __init__(self, errors: Sequence[FieldError], subject: str = "") -> None:
        self.errors = list(errors)
        message = aggregate_message(self.errors)
        super().__init__(f"{subject}: {message}" if subject else message)


# -- Go-style error text ----------------------------------------------------------------------

_TYPE_LABELS = {
    INVALID: "Invalid value",
    NOT_SUPPORTED: "Unsupported value",
    REQUIRED: "Required value",
}


def _go_value(value: Any) -> str:
    """A bad value as Go's ``field.Error`` prints it (``%q`` strings, ``%#v`` string slices)."""
    if value is None:
        return "[]string(nil)"
    if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        return "[]string{" + ", ".join(fe.go_value(v) for v in value) + "}"
    return fe.go_value(value)


def describe_error(error: FieldError) -> str:
    """``field.Error.Error()``: ``<field>: Invalid value: "x": <detail>``."""
    label = _TYPE_LABELS.get(error.type, error.type)
    if error.detail.startswith(label):  # fe helpers use the body itself when Go has no detail
        return f"{error.field}: {error.detail}"
    if error.type == REQUIRED:
        return f"{error.field}: {label}: {error.detail}"
    return f"{error.field}: {label}: {_go_value(error.bad_value)}: {error.detail}"


def aggregate_message(errors: Sequence[FieldError]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message, or ``[a, b]`` without repeats."""
    messages = list(dict.fromkeys(describe_error(e) for e in errors))
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


# -- parsing ----------------------------------------------------------------------------------


def _string_list(raw: Any, path: str, errors: list[FieldError]) -> tuple[str, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
        errors.append(fe.invalid(path, raw, "must be a list of strings"))
        return ()
    return tuple(raw)


def requirement_errors(req: Requirement, path: str, raw_values: Any = ()) -> list[FieldError]:
    """``labels.NewRequirement`` validation of a label requirement (key, values, operator)."""
    errors: list[FieldError] = []
    key_errors = is_label_key(req.key)
    if key_errors:
        errors.append(fe.invalid(fe.child(path, "key"), req.key, "; ".join(key_errors)))
    values_path = fe.child(path, "values")
    values = req.values
    if req.operator in ("In", "NotIn") and not values:
        detail = "for 'in', 'notin' operators, values set can't be empty"
        errors.append(fe.invalid(values_path, raw_values, detail))
    elif req.operator == "Equals" and len(values) != 1:
        detail = "exact-match compatibility requires one single value"
        errors.append(fe.invalid(values_path, raw_values, detail))
    elif req.operator in ("Exists", "DoesNotExist") and values:
        detail = "values set must be empty for exists and does not exist"
        errors.append(fe.invalid(values_path, raw_values, detail))
    elif req.operator in ("Gt", "Lt"):
        if len(values) != 1:
            detail = "for 'Gt', 'Lt' operators, exactly one value is required"
            errors.append(fe.invalid(values_path, raw_values, detail))
        for i, value in enumerate(values):
            if parse_int64(value) is None:
                detail = "for 'Gt', 'Lt' operators, the value must be an integer"
                errors.append(fe.invalid(fe.index(values_path, i), value, detail))
    for i, value in enumerate(values):
        value_errors = is_label_value(value)
        if value_errors:
            where = fe.key(fe.index(values_path, i), req.key)
            errors.append(fe.invalid(where, value, "; ".join(value_errors)))
    return errors


def _parse_expression(
    raw: Any, path: str, operators: Sequence[str], errors: list[FieldError]
) -> Requirement | None:
    if not isinstance(raw, Mapping):
        errors.append(fe.invalid(path, raw, "must be an object"))
        return None
    operator = raw.get("operator")
    if operator not in operators:
        errors.append(fe.not_supported(fe.child(path, "operator"), operator, operators))
        return None
    raw_values = raw.get("values")
    values = _string_list(raw_values, fe.child(path, "values"), errors) or ()
    requirement = Requirement(str(raw.get("key") or ""), str(operator), values)
    errors.extend(requirement_errors(requirement, path, raw_values))
    return requirement


def _parse_field(raw: Any, path: str, errors: list[FieldError]) -> Requirement | None:
    """``nodeSelectorRequirementsAsFieldSelector``: In/NotIn with exactly one value."""
    if not isinstance(raw, Mapping):
        errors.append(fe.invalid(path, raw, "must be an object"))
        return None
    operator = raw.get("operator")
    if operator not in FIELD_SELECTOR_OPERATORS:
        where = fe.child(path, "operator")
        errors.append(fe.not_supported(where, operator, FIELD_SELECTOR_OPERATORS))
        return None
    raw_values = raw.get("values")
    values = _string_list(raw_values, fe.child(path, "values"), errors) or ()
    if len(values) != 1:
        errors.append(fe.invalid(fe.child(path, "values"), raw_values, "must have one element"))
        return None
    return Requirement(str(raw.get("key") or ""), str(operator), values)


def _list_of(raw: Any, path: str, errors: list[FieldError]) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        errors.append(fe.invalid(path, raw, "must be a list"))
        return []
    return raw


def is_empty_term(raw: Any) -> bool:
    """``isEmptyNodeSelectorTerm``: no expressions and no fields (such a term selects nothing)."""
    return not isinstance(raw, Mapping) or (
        not raw.get("matchExpressions") and not raw.get("matchFields")
    )


def parse_term(raw: Mapping[str, Any], index: int, path: str) -> SelectorTerm:
    """``newNodeSelectorTerm``: the term's requirements plus every parse error, with paths."""
    errors: list[FieldError] = []
    expressions_path = fe.child(path, "matchExpressions")
    fields_path = fe.child(path, "matchFields")
    expressions = [
        _parse_expression(e, fe.index(expressions_path, i), NODE_SELECTOR_OPERATORS, errors)
        for i, e in enumerate(_list_of(raw.get("matchExpressions"), expressions_path, errors))
    ]
    fields = [
        _parse_field(f, fe.index(fields_path, i), errors)
        for i, f in enumerate(_list_of(raw.get("matchFields"), fields_path, errors))
    ]
    return SelectorTerm(
        index,
        tuple(r for r in expressions if r is not None),
        tuple(r for r in fields if r is not None),
        tuple(errors),
    )


def parse_node_selector_terms(raw: Any, path: str = "nodeSelectorTerms") -> list[SelectorTerm]:
    """``NewLazyErrorNodeSelector``: the non-empty terms, each with its own parse errors."""
    errors: list[FieldError] = []
    terms = [
        parse_term(term, i, fe.index(path, i))
        for i, term in enumerate(_list_of(raw, path, errors))
        if not is_empty_term(term)
    ]
    if errors:  # the list itself is malformed: nothing can match
        terms.append(SelectorTerm(-1, (), (), tuple(errors)))
    return terms


def parse_preferred_terms(raw: Any, path: str = "") -> tuple[list[WeightedTerm], list[FieldError]]:
    """``NewPreferredSchedulingTerms``: zero-weight and empty terms are skipped unparsed.

    Upstream indexes errors as ``[i].matchExpressions[j]`` with no ``.preference`` in the path.
    """
    errors: list[FieldError] = []
    terms: list[WeightedTerm] = []
    for i, item in enumerate(_list_of(raw, path or "preferred", errors)):
        if not isinstance(item, Mapping):
            errors.append(fe.invalid(fe.index(path, i), item, "must be an object"))
            continue
        weight = item.get("weight") or 0
        if isinstance(weight, bool) or not isinstance(weight, int):
            errors.append(fe.invalid(fe.child(fe.index(path, i), "weight"), weight, "not int32"))
            continue
        preference = item.get("preference")
        if weight == 0 or not isinstance(preference, Mapping) or is_empty_term(preference):
            continue
        term = parse_term(preference, i, fe.index(path, i))
        errors.extend(term.errors)
        if not term.errors:
            terms.append(WeightedTerm(weight, term))
    return terms, errors


def term_errors(terms: Sequence[SelectorTerm]) -> list[FieldError]:
    return [e for term in terms for e in term.errors]


# -- matching ---------------------------------------------------------------------------------


def _lookup(column: LabelColumn, table: BoolArray) -> BoolArray:
    """Per-node result from a table over ``[absent, value code 0, value code 1, ...]``."""
    result: BoolArray = table[column.codes + 1]
    return result


def _value_table(column: LabelColumn, values: Sequence[str], *, absent: bool) -> BoolArray:
    """True (after ``absent`` for nodes without the label) at the codes of ``values``."""
    table = np.zeros(len(column.vocabulary) + 1, dtype=bool)
    codes = [column.vocabulary[v] + 1 for v in values if v in column.vocabulary]
    table[codes] = True
    table[0] = absent
    return table


def _integer_values(snapshot: Snapshot, key: str) -> tuple[IntArray, BoolArray]:
    """Each distinct value of label ``key`` parsed as int64 (value, parsed-ok), cached."""
    cache: dict[str, tuple[IntArray, BoolArray]] = snapshot.extension(_INTEGER_LABELS, _new_cache)
    if key not in cache:
        column = snapshot.label_column(key)
        parsed = [parse_int64(value) for value in column.vocabulary]
        values = np.array([0 if p is None else p for p in parsed], dtype=np.int64)
        cache[key] = (values, np.array([p is not None for p in parsed], dtype=bool))
    return cache[key]


def _new_cache(_: Snapshot) -> dict[str, tuple[IntArray, BoolArray]]:
    return {}


def _compare(snapshot: Snapshot, req: Requirement) -> BoolArray:
    """``Gt``/``Lt``: the node's label, parsed as int64, against the single requirement value."""
    column = snapshot.label_column(req.key)
    bound = parse_int64(req.values[0]) if len(req.values) == 1 else None
    if bound is None:
        return np.zeros(len(snapshot), dtype=bool)
    values, parsed = _integer_values(snapshot, req.key)
    passes = values > bound if req.operator == "Gt" else values < bound
    table = np.concatenate(([False], parsed & passes))
    return _lookup(column, table)


def requirement_mask(snapshot: Snapshot, req: Requirement) -> BoolArray:
    """``labels.Requirement.Matches`` on every node's labels."""
    if req.operator in ("Gt", "Lt"):
        return _compare(snapshot, req)
    column = snapshot.label_column(req.key)
    present: BoolArray = column.codes >= 0
    match req.operator:
        case "Exists":
            return present
        case "DoesNotExist":
            return ~present
        case "In" | "Equals":
            return _lookup(column, _value_table(column, req.values, absent=False))
        case "NotIn":
            return _lookup(column, ~_value_table(column, req.values, absent=False))
    return np.zeros(len(snapshot), dtype=bool)


def field_mask(snapshot: Snapshot, req: Requirement) -> BoolArray:
    """A ``matchFields`` requirement: ``metadata.name`` is the node name, other fields ``""``."""
    if req.key == NAME_FIELD:
        equal = np.zeros(len(snapshot), dtype=bool)
        index = snapshot.index.get(req.values[0])
        if index is not None:
            equal[index] = True
    else:
        equal = np.full(len(snapshot), req.values[0] == "", dtype=bool)
    return equal if req.operator == "In" else ~equal


def term_mask(snapshot: Snapshot, term: SelectorTerm) -> BoolArray:
    """Nodes matching every requirement of ``term``; none when the term failed to parse."""
    result = np.full(len(snapshot), not term.errors, dtype=bool)
    if term.errors:
        return result
    for req in term.expressions:
        result &= requirement_mask(snapshot, req)
    for req in term.fields:
        result &= field_mask(snapshot, req)
    return result


def terms_mask(snapshot: Snapshot, terms: Sequence[SelectorTerm]) -> BoolArray:
    """Nodes matching at least one term (an empty list matches nothing)."""
    result = np.zeros(len(snapshot), dtype=bool)
    for term in terms:
        result |= term_mask(snapshot, term)
    return result


def preferred_score(snapshot: Snapshot, terms: Sequence[WeightedTerm]) -> IntArray:
    """``PreferredSchedulingTerms.Score``: per node, the sum of the weights of matching terms."""
    score = np.zeros(len(snapshot), dtype=np.int64)
    for weighted in terms:
        score += weighted.weight * term_mask(snapshot, weighted.term)
    return score


# -- public entry points ----------------------------------------------------------------------


def match_node_selector_terms(
    snapshot: Snapshot, terms: Any, path: str = "nodeSelectorTerms"
) -> BoolArray:
    """Nodes matching a ``nodeSelectorTerms`` list; a parse error raises :class:`SelectorError`."""
    parsed = parse_node_selector_terms(terms, path)
    errors = term_errors(parsed)
    if errors:
        raise SelectorError(errors)
    return terms_mask(snapshot, parsed)


def match_labels(snapshot: Snapshot, mapping: Mapping[str, str]) -> BoolArray:
    """Nodes whose labels include every ``key: value`` (``labels.SelectorFromSet``, unvalidated)."""
    result = np.ones(len(snapshot), dtype=bool)
    for key, value in mapping.items():
        result &= requirement_mask(snapshot, Requirement(key, "In", (value,)))
    return result


def parse_label_selector(selector: Mapping[str, Any], path: str) -> list[Requirement]:
    """``LabelSelectorAsSelector`` requirements; raises :class:`SelectorError` on bad input."""
    errors: list[FieldError] = []
    requirements: list[Requirement] = []
    labels_path = fe.child(path, "matchLabels")
    match_labels_raw = selector.get("matchLabels") or {}
    if not isinstance(match_labels_raw, Mapping):
        errors.append(fe.invalid(labels_path, match_labels_raw, "must be an object"))
        match_labels_raw = {}
    for key, value in match_labels_raw.items():
        req = Requirement(str(key), "Equals", (str(value),))
        errors.extend(requirement_errors(req, fe.key(labels_path, str(key)), [value]))
        requirements.append(req)
    expressions_path = fe.child(path, "matchExpressions")
    for i, raw in enumerate(_list_of(selector.get("matchExpressions"), expressions_path, errors)):
        where = fe.index(expressions_path, i)
        req_or_none = _parse_expression(raw, where, LABEL_SELECTOR_OPERATORS, errors)
        if req_or_none is not None:
            requirements.append(req_or_none)
    if errors:
        raise SelectorError(errors)
    return requirements


def match_label_selector(
    snapshot: Snapshot, selector: Mapping[str, Any] | None, path: str = "labelSelector"
) -> BoolArray:
    """Nodes a ``metav1.LabelSelector`` selects: null selects none, ``{}`` selects all."""
    if selector is None:
        return np.zeros(len(snapshot), dtype=bool)
    result = np.ones(len(snapshot), dtype=bool)
    for req in parse_label_selector(selector, path):
        result &= requirement_mask(snapshot, req)
    return result
