"""``NodeResourceTopologyMatchArgs``: v1 defaulting and validation.

Upstream (kubernetes-sigs/scheduler-plugins): apis/config/v1/types.go (JSON names),
apis/config/v1/defaults.go ``SetDefaults_NodeResourceTopologyMatchArgs`` and
apis/config/validation/validation_pluginargs.go ``ValidateNodeResourceTopologyMatchArgs``.
Upstream validates only the strategy type and the preemption mode; weights are not validated
(a weight below 1 simply counts as 1 at runtime, see ``score.resource_weights``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from scoring.errors import INVALID, TYPE_INVALID, FieldError

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
BALANCED_ALLOCATION = "BalancedAllocation"
LEAST_NUMA_NODES = "LeastNUMANodes"
SCORING_STRATEGIES = frozenset(
    {MOST_ALLOCATED, BALANCED_ALLOCATION, LEAST_ALLOCATED, LEAST_NUMA_NODES}
)
PREEMPTION_MODES = frozenset({"Disabled", "Enabled"})

DEFAULT_RESOURCES: tuple[Mapping[str, Any], ...] = (
    {"name": "cpu", "weight": 1},
    {"name": "memory", "weight": 1},
)
# v1 defaults of the cache block; resyncScope has none (nil means "All" at runtime).
CACHE_DEFAULTS: Mapping[str, str] = {
    "foreignPodsDetect": "All",
    "resyncMethod": "Autodetect",
    "informerMode": "Dedicated",
}


def default_args(args: Mapping[str, Any]) -> dict[str, Any]:
    """``SetDefaults_NodeResourceTopologyMatchArgs`` on a copy, in v1 JSON form."""
    out: dict[str, Any] = copy.deepcopy(dict(args))
    strategy = out.get("scoringStrategy")
    if strategy is None:
        strategy = {"type": LEAST_ALLOCATED, "resources": []}
    if isinstance(strategy, Mapping):
        strategy = dict(strategy)
        resources = strategy.get("resources") or [dict(r) for r in DEFAULT_RESOURCES]
        if isinstance(resources, list):
            resources = [_default_weight(r) for r in resources]
        strategy["resources"] = resources
    out["scoringStrategy"] = strategy
    cache = out.get("cache")
    if cache is None:
        cache = {}
    if isinstance(cache, Mapping):
        cache = dict(cache)
        for key, value in CACHE_DEFAULTS.items():
            if cache.get(key) is None:
                cache[key] = value
    out["cache"] = cache
    if out.get("preemptionMode") is None:
        out["preemptionMode"] = "Disabled"
    return out


def _default_weight(resource: Any) -> Any:
    if isinstance(resource, Mapping):
        resource = dict(resource)
        if not resource.get("weight"):
            resource["weight"] = 1
    return resource


def validate_args(args: Mapping[str, Any], path: str) -> list[FieldError]:
    """``ValidateNodeResourceTopologyMatchArgs`` (on the defaulted args), plus JSON type checks.

    The type checks stand in for the strict decoding kube-scheduler applies before validation.
    """
    args = default_args(args)
    errors = _type_errors(args, path)
    strategy = args.get("scoringStrategy")
    if isinstance(strategy, Mapping):
        kind = strategy.get("type", "")
        if isinstance(kind, str) and kind not in SCORING_STRATEGIES:
            detail = "invalid ScoringStrategyType"
            errors.append(FieldError(f"{path}.scoringStrategy.type", INVALID, detail, kind))
    mode = args.get("preemptionMode")
    if isinstance(mode, str) and mode not in PREEMPTION_MODES:
        errors.append(FieldError(f"{path}.preemptionMode", INVALID, "invalid PreemptionMode", mode))
    return errors


def _is(value: Any, kind: type) -> bool:
    """JSON type check; booleans are not integers here (Go decoding agrees)."""
    return isinstance(value, kind) and (kind is bool or not isinstance(value, bool))


def _type_errors(args: Mapping[str, Any], path: str) -> list[FieldError]:
    errors: list[FieldError] = []

    def check(value: Any, kind: type, where: str, what: str) -> None:
        if not _is(value, kind):
            errors.append(FieldError(f"{path}.{where}", TYPE_INVALID, f"expected {what}", value))

    strategy = args.get("scoringStrategy")
    check(strategy, Mapping, "scoringStrategy", "an object")
    if isinstance(strategy, Mapping):
        if "type" in strategy:
            check(strategy["type"], str, "scoringStrategy.type", "a string")
        resources = strategy.get("resources")
        check(resources, list, "scoringStrategy.resources", "a list")
        for i, item in enumerate(resources if isinstance(resources, list) else []):
            where = f"scoringStrategy.resources[{i}]"
            check(item, Mapping, where, "an object")
            if isinstance(item, Mapping):
                check(item.get("name", ""), str, f"{where}.name", "a string")
                check(item.get("weight"), int, f"{where}.weight", "an integer")
    if args.get("cacheResyncPeriodSeconds") is not None:
        check(args["cacheResyncPeriodSeconds"], int, "cacheResyncPeriodSeconds", "an integer")
    if "discardReservedNodes" in args:
        check(args["discardReservedNodes"], bool, "discardReservedNodes", "a boolean")
    cache = args.get("cache")
    check(cache, Mapping, "cache", "an object")
    if isinstance(cache, Mapping):
        for key in (*CACHE_DEFAULTS, "resyncScope"):
            if cache.get(key) is not None:
                check(cache[key], str, f"cache.{key}", "a string")
    check(args.get("preemptionMode"), str, "preemptionMode", "a string")
    return errors
