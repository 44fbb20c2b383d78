"""Node selector parsing errors, as ``NodeAffinityArgs`` validation reports them.

``ValidateNodeAffinityArgs`` builds ``nodeaffinity.NewNodeSelector`` and
``nodeaffinity.NewPreferredSchedulingTerms`` (k8s.io/component-helpers) and returns their parse
errors, which come from ``labels.NewRequirement`` (k8s.io/apimachinery). Paths and messages follow
those functions in v0.35; note that preferred terms are indexed without a ``.preference`` child.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scoring.config import field_errors as fe
from scoring.config.k8s_names import is_go_int64, is_label_key, is_label_value
from scoring.errors import FieldError

_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_SELECTOR_OPERATORS = ("In", "NotIn")


def _requirement(key: str, op: str, values: Sequence[str], path: str) -> list[FieldError]:
    """``labels.NewRequirement`` errors for a node selector requirement."""
    errs: list[FieldError] = []
    key_errs = is_label_key(key)
    if key_errs:
        errs.append(fe.invalid(fe.child(path, "key"), key, "; ".join(key_errs)))
    values_path = fe.child(path, "values")
    if op in ("In", "NotIn"):
        if not values:
            errs.append(
                fe.invalid(
                    values_path,
                    list(values),
                    "for 'in', 'notin' operators, values set can't be empty",
                )
            )
    elif op in ("Exists", "DoesNotExist"):
        if values:
            errs.append(
                fe.invalid(
                    values_path,
                    list(values),
                    "values set must be empty for exists and does not exist",
                )
            )
    else:  # Gt, Lt
        if len(values) != 1:
            errs.append(
                fe.invalid(
                    values_path,
                    list(values),
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                )
            )
        for i, value in enumerate(values):
            if not is_go_int64(value):
                errs.append(
                    fe.invalid(
                        fe.index(values_path, i),
                        value,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
                )
    for i, value in enumerate(values):
        value_errs = is_label_value(value)
        if value_errs:
            errs.append(
                fe.invalid(fe.key(fe.index(values_path, i), key), value, "; ".join(value_errs))
            )
    return errs


def _match_expressions(exprs: Sequence[Mapping[str, Any]], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, expr in enumerate(exprs):
        p = fe.index(path, i)
        op = expr.get("operator", "")
        if op not in _SELECTOR_OPERATORS:
            errs.append(fe.not_supported(fe.child(p, "operator"), op, _SELECTOR_OPERATORS))
            continue
        errs.extend(_requirement(expr.get("key", ""), op, expr.get("values") or [], p))
    return errs


def _match_fields(exprs: Sequence[Mapping[str, Any]], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, expr in enumerate(exprs):
        p = fe.index(path, i)
        op = expr.get("operator", "")
        values = expr.get("values") or []
        if op in _FIELD_SELECTOR_OPERATORS:
            if len(values) != 1:
                errs.append(fe.invalid(fe.child(p, "values"), values, "must have one element"))
        else:
            errs.append(fe.not_supported(fe.child(p, "operator"), op, _FIELD_SELECTOR_OPERATORS))
    return errs


def _term(term: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if term.get("matchExpressions"):
        errs.extend(
            _match_expressions(term["matchExpressions"], fe.child(path, "matchExpressions"))
        )
    if term.get("matchFields"):
        errs.extend(_match_fields(term["matchFields"], fe.child(path, "matchFields")))
    return errs


def _is_empty_term(term: Mapping[str, Any]) -> bool:
    return not term.get("matchExpressions") and not term.get("matchFields")


def node_selector_errors(selector: Mapping[str, Any], path: str) -> list[FieldError]:
    """``nodeaffinity.NewNodeSelector`` errors; empty terms are skipped, as upstream."""
    errs: list[FieldError] = []
    terms_path = fe.child(path, "nodeSelectorTerms")
    for i, term in enumerate(selector.get("nodeSelectorTerms") or []):
        if _is_empty_term(term):
            continue
        errs.extend(_term(term, fe.index(terms_path, i)))
    return errs


def preferred_terms_errors(terms: Sequence[Mapping[str, Any]], path: str) -> list[FieldError]:
    """``nodeaffinity.NewPreferredSchedulingTerms`` errors; zero-weight and empty terms skipped."""
    errs: list[FieldError] = []
    for i, term in enumerate(terms):
        preference = term.get("preference") or {}
        if not term.get("weight") or _is_empty_term(preference):
            continue
        errs.extend(_term(preference, fe.index(path, i)))
    return errs
