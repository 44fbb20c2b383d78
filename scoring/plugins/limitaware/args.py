"""``LimitAwareArgs``: defaulting and validation.

Upstream: koordinator-sh/koordinator@9ddd4fb2 (PR #1486, "koord-scheduler: support limit
aware", closed unmerged) pkg/scheduler/apis/config/v1beta2/{types.go,defaults.go}
``SetDefaults_LimitAwareArgs`` and validation/validation_pluginargs.go
``ValidateLimitAwareArgs``/``validateResourceWeights``.

One addition: Koordinator leaves ``defaultLimitToAllocatableRatio`` unset, and with no ratio the
plugin counts no resource at all (every node scores 0, Filter never fails). The engine defaults
it to 100 (% of allocatable) for every weighted resource, which is KEP-217's definition of the
node limit ratio (limits / allocatable). A configured map, or a node annotation, replaces it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from scoring.errors import INVALID, TYPE_INVALID, FieldError
from scoring.goint import INT32_MAX, INT32_MIN

DEFAULT_WEIGHTS: Mapping[str, int] = {"cpu": 1, "memory": 1}
DEFAULT_RATIO_PERCENT = 100


def default_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """``SetDefaults_LimitAwareArgs`` (plus the ratio default above) on a copy, in JSON form."""
    out: dict[str, Any] = copy.deepcopy(dict(args))
    weights = out.get("scoringResourceWeights") or dict(DEFAULT_WEIGHTS)
    if isinstance(weights, Mapping):
        weights = {name: (1 if weight == 0 else weight) for name, weight in weights.items()}
    out["scoringResourceWeights"] = weights
    if not out.get("defaultLimitToAllocatableRatio") and isinstance(weights, Mapping):
        out["defaultLimitToAllocatableRatio"] = dict.fromkeys(weights, DEFAULT_RATIO_PERCENT)
    return out


def validate_args(args: Mapping[str, Any], path: str) -> list[FieldError]:
    """``ValidateLimitAwareArgs`` on the defaulted args, plus JSON type checks.

    Upstream reports the first bad weight it meets (Go map order); here the first by name.
    """
    args = default_args(args)
    errors: list[FieldError] = []
    weights = args.get("scoringResourceWeights")
    where = f"{path}.scoringResourceWeights"
    if not isinstance(weights, Mapping):
        return [FieldError(where, TYPE_INVALID, "expected an object", weights)]
    for name in sorted(weights):
        weight = weights[name]
        if isinstance(weight, bool) or not isinstance(weight, int):
            errors.append(
                FieldError(f"{where}.{name}", TYPE_INVALID, "expected an integer", weight)
            )
    if not errors:
        detail = weight_problem(weights)
        if detail:
            errors.append(FieldError(where, INVALID, detail, dict(weights)))
    errors.extend(_ratio_type_errors(args.get("defaultLimitToAllocatableRatio"), path))
    return errors


def weight_problem(weights: Mapping[str, int]) -> str | None:
    """``validateResourceWeights``: each weight in [1, 100]."""
    for name in sorted(weights):
        weight = weights[name]
        if weight <= 0:
            return f"resource Weight of {name} should be a positive value, got {weight}"
        if weight > 100:
            return f"resource Weight of {name} should be less than 100, got {weight}"
    return None


def _ratio_type_errors(ratio: Any, path: str) -> list[FieldError]:
    """Values must decode as IntOrString: an int32, or a string (a percentage at runtime)."""
    where = f"{path}.defaultLimitToAllocatableRatio"
    if not isinstance(ratio, Mapping):
        return [FieldError(where, TYPE_INVALID, "expected an object", ratio)]
    errors = []
    for name in sorted(ratio):
        value = ratio[name]
        if isinstance(value, str) or value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not _int32(value):
            detail = "expected an int32 or a percentage string"
            errors.append(FieldError(f"{where}.{name}", TYPE_INVALID, detail, value))
    return errors


def _int32(value: int) -> bool:
    return INT32_MIN <= value <= INT32_MAX
