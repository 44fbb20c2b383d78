"""In-tree plugin args: v1 schemas, v1 defaulting (``SetDefaults_*Args``) and validation.

Defaulting follows ``pkg/scheduler/apis/config/v1/defaults.go`` and validation
``pkg/scheduler/apis/config/validation/validation_pluginargs.go`` of Kubernetes 1.35, with the
feature gates of :mod:`scoring.config.features`. Args are plain v1 JSON dicts (``apiVersion`` and
``kind`` removed); a defaulter mutates its dict, a validator returns every error, with paths under
the ``path`` it is given (``profiles[i].pluginConfig[j].args``).

Version skew (documented in the conformance vectors):

- ``NodeResourcesFitArgs``: since 1.35 (kubernetes PR #132120) a ``RequestedToCapacityRatio``
  strategy requires ``requestedToCapacityRatio`` (Required), other strategies forbid it, a nil
  ``scoringStrategy`` is Required, and the shape is validated under
  ``scoringStrategy.requestedToCapacityRatio.shape``; up to 1.34 the path was
  ``scoringStrategy.shape`` and the shape was only checked when present. The resource weight path
  is ``scoringStrategy.resources[i].weight`` (it was ``resources[i].weight`` before ~1.23).
- ``DynamicResourcesArgs``: ``bindingTimeout`` is forbidden while ``DRADeviceBindingConditions``
  is off (1.34, 1.35).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scoring import field_errors as fe
from scoring.config import features
from scoring.config.node_selectors import node_selector_errors, preferred_terms_errors
from scoring.config.schema import (
    BOOL,
    DURATION,
    INT32,
    INT64,
    NODE_AFFINITY,
    STRING,
    TOPOLOGY_SPREAD_CONSTRAINT,
    Field,
    ListOf,
    Struct,
)
from scoring.durations import SECOND, parse_duration
from scoring.errors import FieldError
from scoring.k8s_names import is_label_key

MAX_CUSTOM_PRIORITY_SCORE = 10

Defaulter = Callable[[dict[str, Any]], None]
Validator = Callable[[Mapping[str, Any], str], list[FieldError]]

_DEFAULT_RESOURCES = ({"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1})


def _default_resources() -> list[dict[str, Any]]:
    return [dict(r) for r in _DEFAULT_RESOURCES]


# ---------------------------------------------------------------------------------------------
# Schemas (k8s.io/kube-scheduler/config/v1 types_pluginargs.go, v0.35)

RESOURCE_SPEC = Struct(
    "ResourceSpec", (Field("name", STRING), Field("weight", INT64, omitempty=True))
)
UTILIZATION_SHAPE_POINT = Struct(
    "UtilizationShapePoint", (Field("utilization", INT32), Field("score", INT32))
)
REQUESTED_TO_CAPACITY_RATIO_PARAM = Struct(
    "RequestedToCapacityRatioParam",
    (Field("shape", ListOf(UTILIZATION_SHAPE_POINT), omitempty=True),),
)
SCORING_STRATEGY = Struct(
    "ScoringStrategy",
    (
        Field("type", STRING, omitempty=True),
        Field("resources", ListOf(RESOURCE_SPEC), omitempty=True),
        Field(
            "requestedToCapacityRatio",
            REQUESTED_TO_CAPACITY_RATIO_PARAM,
            pointer=True,
            omitempty=True,
        ),
    ),
)
DEFAULT_PREEMPTION_ARGS = Struct(
    "DefaultPreemptionArgs",
    (
        Field("minCandidateNodesPercentage", INT32, pointer=True, omitempty=True),
        Field("minCandidateNodesAbsolute", INT32, pointer=True, omitempty=True),
    ),
    type_meta=True,
)
INTER_POD_AFFINITY_ARGS = Struct(
    "InterPodAffinityArgs",
    (
        Field("hardPodAffinityWeight", INT32, pointer=True, omitempty=True),
        Field("ignorePreferredTermsOfExistingPods", BOOL),
    ),
    type_meta=True,
)
NODE_RESOURCES_FIT_ARGS = Struct(
    "NodeResourcesFitArgs",
    (
        Field("ignoredResources", ListOf(STRING), omitempty=True),
        Field("ignoredResourceGroups", ListOf(STRING), omitempty=True),
        Field("scoringStrategy", SCORING_STRATEGY, pointer=True, omitempty=True),
    ),
    type_meta=True,
)
POD_TOPOLOGY_SPREAD_ARGS = Struct(
    "PodTopologySpreadArgs",
    (
        Field("defaultConstraints", ListOf(TOPOLOGY_SPREAD_CONSTRAINT), omitempty=True),
        Field("defaultingType", STRING, omitempty=True),
    ),
    type_meta=True,
)
NODE_RESOURCES_BALANCED_ALLOCATION_ARGS = Struct(
    "NodeResourcesBalancedAllocationArgs",
    (Field("resources", ListOf(RESOURCE_SPEC), omitempty=True),),
    type_meta=True,
)
VOLUME_BINDING_ARGS = Struct(
    "VolumeBindingArgs",
    (
        Field("bindTimeoutSeconds", INT64, pointer=True, omitempty=True),
        Field("shape", ListOf(UTILIZATION_SHAPE_POINT), omitempty=True),
    ),
    type_meta=True,
)
NODE_AFFINITY_ARGS = Struct(
    "NodeAffinityArgs",
    (Field("addedAffinity", NODE_AFFINITY, pointer=True, omitempty=True),),
    type_meta=True,
)
DYNAMIC_RESOURCES_ARGS = Struct(
    "DynamicResourcesArgs",
    (
        Field("filterTimeout", DURATION, pointer=True),
        Field("bindingTimeout", DURATION, pointer=True, omitempty=True),
    ),
    type_meta=True,
)


# ---------------------------------------------------------------------------------------------
# Shared validation helpers


def _validate_function_shape(shape: Sequence[Mapping[str, Any]], path: str) -> list[FieldError]:
    """``validateFunctionShape``: non-empty, strictly increasing utilization, ranges."""
    if not shape:
        return [fe.required(path, "at least one point must be specified")]
    errs: list[FieldError] = []
    for i in range(1, len(shape)):
        if shape[i - 1].get("utilization", 0) >= shape[i].get("utilization", 0):
            errs.append(
                fe.invalid(
                    fe.child(fe.index(path, i), "utilization"),
                    shape[i].get("utilization", 0),
                    "values must be sorted in increasing order",
                )
            )
            break
    for i, point in enumerate(shape):
        utilization = point.get("utilization", 0)
        score = point.get("score", 0)
        if not 0 <= utilization <= 100:
            errs.append(
                fe.invalid(
                    fe.child(fe.index(path, i), "utilization"),
                    utilization,
                    "not in valid range [0, 100]",
                )
            )
        if not 0 <= score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                fe.invalid(
                    fe.child(fe.index(path, i), "score"),
                    score,
                    f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                )
            )
    return errs


def _validate_resources(resources: Sequence[Mapping[str, Any]], path: str) -> list[FieldError]:
    """``validateResources``: every weight in (0, 100]."""
    errs: list[FieldError] = []
    for i, resource in enumerate(resources):
        weight = resource.get("weight", 0)
        if weight <= 0 or weight > 100:
            errs.append(
                fe.invalid(
                    fe.child(fe.index(path, i), "weight"),
                    weight,
                    f"resource weight of {resource.get('name', '')} not in valid range (0, 100]",
                )
            )
    return errs


def _validate_label_name(value: str, path: str) -> list[FieldError]:
    """``metav1validation.ValidateLabelName``."""
    return [fe.invalid(path, value, msg) for msg in is_label_key(value)]


# ---------------------------------------------------------------------------------------------
# DefaultPreemptionArgs


def default_default_preemption(args: dict[str, Any]) -> None:
    if args.get("minCandidateNodesPercentage") is None:
        args["minCandidateNodesPercentage"] = 10
    if args.get("minCandidateNodesAbsolute") is None:
        args["minCandidateNodesAbsolute"] = 100


def validate_default_preemption(args: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    percentage_path = fe.child(path, "minCandidateNodesPercentage")
    absolute_path = fe.child(path, "minCandidateNodesAbsolute")
    percentage = args.get("minCandidateNodesPercentage") or 0
    absolute = args.get("minCandidateNodesAbsolute") or 0
    if percentage < 0 or percentage > 100:
        errs.append(fe.invalid(percentage_path, percentage, "not in valid range [0, 100]"))
    if absolute < 0:
        errs.append(fe.invalid(absolute_path, absolute, "not in valid range [0, inf)"))
    if percentage == 0 and absolute == 0:
        errs.append(
            fe.invalid(
                percentage_path,
                percentage,
                "cannot be zero at the same time as minCandidateNodesAbsolute",
            )
        )
        errs.append(
            fe.invalid(
                absolute_path,
                absolute,
                "cannot be zero at the same time as minCandidateNodesPercentage",
            )
        )
    return errs


# ---------------------------------------------------------------------------------------------
# InterPodAffinityArgs


def default_inter_pod_affinity(args: dict[str, Any]) -> None:
    if args.get("hardPodAffinityWeight") is None:
        args["hardPodAffinityWeight"] = 1


def validate_inter_pod_affinity(args: Mapping[str, Any], path: str) -> list[FieldError]:
    weight = args.get("hardPodAffinityWeight") or 0
    if weight < 0 or weight > 100:
        return [
            fe.invalid(
                fe.child(path, "hardPodAffinityWeight"), weight, "not in valid range [0, 100]"
            )
        ]
    return []


# ---------------------------------------------------------------------------------------------
# NodeResourcesFitArgs

SCORING_STRATEGY_TYPES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")


def default_node_resources_fit(args: dict[str, Any]) -> None:
    strategy = args.get("scoringStrategy")
    if strategy is None:
        strategy = {"type": "LeastAllocated", "resources": _default_resources()}
        args["scoringStrategy"] = strategy
    if not strategy.get("resources"):
        strategy["resources"] = _default_resources()
    for resource in strategy["resources"]:
        if not resource.get("weight"):
            resource["weight"] = 1


def validate_node_resources_fit(args: Mapping[str, Any], path: str) -> list[FieldError]:
    """``ValidateNodeResourcesFitArgs`` (1.35).

    Upstream, ``ValidateKubeSchedulerConfiguration`` registers this validator under the key
    ``NodeResourcesFitArgs`` instead of the plugin name, so config validation never runs it; the
    plugin constructor runs it and kube-scheduler fails at startup with
    ``initializing plugin "NodeResourcesFit": ...`` (relative paths). schedboard reports the same
    errors up front, with the full ``profiles[i].pluginConfig[j].args`` prefix.
    """
    errs: list[FieldError] = []
    res_path = fe.child(path, "ignoredResources")
    for i, res in enumerate(args.get("ignoredResources") or []):
        errs.extend(_validate_label_name(res, fe.index(res_path, i)))
    group_path = fe.child(path, "ignoredResourceGroups")
    for i, group in enumerate(args.get("ignoredResourceGroups") or []):
        p = fe.index(group_path, i)
        if "/" in group:
            errs.append(fe.invalid(p, group, "resource group name can't contain '/'"))
        errs.extend(_validate_label_name(group, p))
    strategy_path = fe.child(path, "scoringStrategy")
    strategy = args.get("scoringStrategy")
    if strategy is None:
        errs.append(fe.required(strategy_path, "ScoringStrategy field is required"))
        return errs
    strategy_type = strategy.get("type", "")
    if strategy_type not in SCORING_STRATEGY_TYPES:
        errs.append(
            fe.not_supported(
                fe.child(strategy_path, "type"), strategy_type, sorted(SCORING_STRATEGY_TYPES)
            )
        )
    errs.extend(
        _validate_resources(strategy.get("resources") or [], fe.child(strategy_path, "resources"))
    )
    rtcr_path = fe.child(strategy_path, "requestedToCapacityRatio")
    rtcr = strategy.get("requestedToCapacityRatio")
    if strategy_type == "RequestedToCapacityRatio":
        if rtcr is None:
            errs.append(
                fe.required(rtcr_path, "must be specified when type is RequestedToCapacityRatio")
            )
        else:
            errs.extend(
                _validate_function_shape(rtcr.get("shape") or [], fe.child(rtcr_path, "shape"))
            )
    elif rtcr is not None:
        errs.append(
            fe.forbidden(rtcr_path, "must be nil when type is not RequestedToCapacityRatio")
        )
    return errs


# ---------------------------------------------------------------------------------------------
# PodTopologySpreadArgs

_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")


def default_pod_topology_spread(args: dict[str, Any]) -> None:
    if not args.get("defaultingType"):
        args["defaultingType"] = "System"


def validate_pod_topology_spread(args: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    defaulting_type = args.get("defaultingType", "")
    constraints: Sequence[Mapping[str, Any]] = args.get("defaultConstraints") or []
    defaulting_path = fe.child(path, "defaultingType")
    if defaulting_type not in ("System", "List"):
        errs.append(fe.not_supported(defaulting_path, defaulting_type, ("System", "List")))
    elif defaulting_type == "System" and constraints:
        errs.append(
            fe.invalid(defaulting_path, defaulting_type, "when .defaultConstraints are not empty")
        )
    constraints_path = fe.child(path, "defaultConstraints")
    for i, c in enumerate(constraints):
        p = fe.index(constraints_path, i)
        max_skew = c.get("maxSkew", 0)
        if max_skew <= 0:
            errs.append(fe.invalid(fe.child(p, "maxSkew"), max_skew, "not in valid range (0, inf)"))
        topology_key = c.get("topologyKey", "")
        if not topology_key:
            errs.append(fe.required(fe.child(p, "topologyKey"), "can not be empty"))
        else:
            errs.extend(_validate_label_name(topology_key, fe.child(p, "topologyKey")))
        when = c.get("whenUnsatisfiable", "")
        if not when:
            errs.append(fe.required(fe.child(p, "whenUnsatisfiable"), "can not be empty"))
        elif when not in _WHEN_UNSATISFIABLE:
            errs.append(
                fe.not_supported(fe.child(p, "whenUnsatisfiable"), when, _WHEN_UNSATISFIABLE)
            )
        if c.get("labelSelector") is not None:
            errs.append(
                fe.forbidden(
                    fe.child(p, "labelSelector"),
                    "constraint must not define a selector, as they deduced for each pod",
                )
            )
        for other in constraints[:i]:
            if other.get("topologyKey", "") == topology_key and (
                other.get("whenUnsatisfiable", "") == when
            ):
                errs.append(fe.duplicate(p, f"{{{topology_key}, {when}}}"))
                break
    return errs


# ---------------------------------------------------------------------------------------------
# NodeResourcesBalancedAllocationArgs


def default_balanced_allocation(args: dict[str, Any]) -> None:
    if not args.get("resources"):
        args["resources"] = _default_resources()
        return
    for resource in args["resources"]:
        if not resource.get("weight"):
            resource["weight"] = 1


def validate_balanced_allocation(args: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    resources_path = fe.child(path, "resources")
    for i, resource in enumerate(args.get("resources") or []):
        name = resource.get("name", "")
        if name in seen:
            errs.append(fe.duplicate(fe.child(fe.index(resources_path, i), "name"), name))
        else:
            seen.add(name)
        weight = resource.get("weight", 0)
        if weight != 1:
            errs.append(
                fe.invalid(fe.child(fe.index(resources_path, i), "weight"), weight, "must be 1")
            )
    return errs


# ---------------------------------------------------------------------------------------------
# VolumeBindingArgs


def default_volume_binding(args: dict[str, Any]) -> None:
    if args.get("bindTimeoutSeconds") is None:
        args["bindTimeoutSeconds"] = 600
    if not args.get("shape") and features.enabled("StorageCapacityScoring"):
        args["shape"] = [
            {"utilization": 0, "score": MAX_CUSTOM_PRIORITY_SCORE},
            {"utilization": 100, "score": 0},
        ]


def validate_volume_binding(args: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    timeout = args.get("bindTimeoutSeconds") or 0
    if timeout < 0:
        errs.append(
            fe.invalid(
                fe.child(path, "bindTimeoutSeconds"),
                timeout,
                "invalid BindTimeoutSeconds, should not be a negative value",
            )
        )
    shape = args.get("shape")
    if features.enabled("StorageCapacityScoring"):
        errs.extend(_validate_function_shape(shape or [], fe.child(path, "shape")))
    elif shape is not None:
        errs.append(
            fe.invalid(
                fe.child(path, "shape"),
                shape,
                "unexpected field `shape`, remove it or turn on the feature gate "
                "StorageCapacityScoring",
            )
        )
    return errs


# ---------------------------------------------------------------------------------------------
# NodeAffinityArgs


def default_node_affinity(args: dict[str, Any]) -> None:
    """NodeAffinityArgs has no v1 defaults."""


def validate_node_affinity(args: Mapping[str, Any], path: str) -> list[FieldError]:
    affinity = args.get("addedAffinity")
    if affinity is None:
        return []
    errs: list[FieldError] = []
    affinity_path = fe.child(path, "addedAffinity")
    required = affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required is not None:
        errs.extend(
            node_selector_errors(
                required, fe.child(affinity_path, "requiredDuringSchedulingIgnoredDuringExecution")
            )
        )
    preferred = affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []
    if preferred:
        errs.extend(
            preferred_terms_errors(
                preferred,
                fe.child(affinity_path, "preferredDuringSchedulingIgnoredDuringExecution"),
            )
        )
    return errs


# ---------------------------------------------------------------------------------------------
# DynamicResourcesArgs


def default_dynamic_resources(args: dict[str, Any]) -> None:
    if args.get("filterTimeout") is None and features.enabled("DRASchedulerFilterTimeout"):
        args["filterTimeout"] = "10s"
    if args.get("bindingTimeout") is None and features.enabled("DRADeviceBindingConditions"):
        args["bindingTimeout"] = "10m0s"


def validate_dynamic_resources(args: Mapping[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    filter_timeout = args.get("filterTimeout")
    if features.enabled("DRASchedulerFilterTimeout"):
        if filter_timeout is not None and parse_duration(filter_timeout) < 0:
            errs.append(
                fe.invalid(
                    fe.child(path, "filterTimeout"), filter_timeout, "must be zero or positive"
                )
            )
    elif filter_timeout is not None:
        errs.append(
            fe.forbidden(
                fe.child(path, "filterTimeout"),
                "DRASchedulingFilterTimeout feature gate is disabled",
            )
        )
    binding_timeout = args.get("bindingTimeout")
    if features.enabled("DRADeviceBindingConditions") and features.enabled(
        "DRAResourceClaimDeviceStatus"
    ):
        if binding_timeout is not None and parse_duration(binding_timeout) < SECOND:
            errs.append(
                fe.invalid(
                    fe.child(path, "bindingTimeout"), binding_timeout, "must be at least 1 second"
                )
            )
    elif binding_timeout is not None:
        errs.append(
            fe.forbidden(
                fe.child(path, "bindingTimeout"),
                "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is "
                "disabled",
            )
        )
    return errs


# ---------------------------------------------------------------------------------------------
# v1beta1-only args (``k8s.io/kube-scheduler/config/v1beta1/types_pluginargs.go`` at v1.20.2):
# NodeResourcesLeastAllocatedArgs, NodeResourcesMostAllocatedArgs, RequestedToCapacityRatioArgs.
# Their defaulting is ``pkg/scheduler/apis/config/v1beta1/defaults.go`` (cpu and memory, weight
# 1, when no resources are given); their validation is the plugin constructors' (run by
# NewFramework, ``validation_pluginargs.go``), with 1.20's wording.

RESOURCES_ARGS_FIELDS = (Field("resources", ListOf(RESOURCE_SPEC), omitempty=True),)
NODE_RESOURCES_LEAST_ALLOCATED_ARGS = Struct(
    "NodeResourcesLeastAllocatedArgs", RESOURCES_ARGS_FIELDS, type_meta=True
)
NODE_RESOURCES_MOST_ALLOCATED_ARGS = Struct(
    "NodeResourcesMostAllocatedArgs", RESOURCES_ARGS_FIELDS, type_meta=True
)
REQUESTED_TO_CAPACITY_RATIO_ARGS = Struct(
    "RequestedToCapacityRatioArgs",
    (Field("shape", ListOf(UTILIZATION_SHAPE_POINT)), *RESOURCES_ARGS_FIELDS),
    type_meta=True,
)


def default_v1beta1_resources(args: dict[str, Any]) -> None:
    """``SetDefaults_NodeResources{Least,Most}AllocatedArgs`` / ``..._RequestedToCapacityRatioArgs``
    (v1beta1): cpu and memory with weight 1 when ``resources`` is empty."""
    if not args.get("resources"):
        args["resources"] = _default_resources()


def validate_v1beta1_allocated(args: Mapping[str, Any], path: str) -> list[FieldError]:
    """``ValidateNodeResources{Least,Most}AllocatedArgs`` (1.20): weights in (0, 100]."""
    errs: list[FieldError] = []
    for i, resource in enumerate(args.get("resources") or []):
        weight = resource.get("weight", 0)
        name = resource.get("name", "")
        where = fe.child(fe.index(fe.child(path, "resources"), i), "weight")
        if weight <= 0:
            errs.append(
                fe.invalid(where, weight, f"resource Weight of {name} should be a positive value")
            )
        elif weight > 100:
            errs.append(
                fe.invalid(where, weight, f"resource Weight of {name} should be at most 100")
            )
    return errs


def validate_v1beta1_requested_to_capacity_ratio(
    args: Mapping[str, Any], path: str
) -> list[FieldError]:
    """``ValidateRequestedToCapacityRatioArgs`` (1.20): the shape, then weights of at least 1."""
    errs = _validate_function_shape(args.get("shape") or [], fe.child(path, "shape"))
    for i, resource in enumerate(args.get("resources") or []):
        weight = resource.get("weight", 0)
        if weight < 1:
            errs.append(
                fe.invalid(
                    fe.child(fe.index(fe.child(path, "resources"), i), "weight"),
                    weight,
                    f"resource {resource.get('name', '')} weight must not be less than 1",
                )
            )
    return errs


# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InTreeArgs:
    """One registered ``kubescheduler.config.k8s.io/v1`` args kind."""

    kind: str
    schema: Struct
    default: Defaulter
    validate: Validator

    def defaulted(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """A defaulted copy of ``args``."""
        out = copy.deepcopy(dict(args))
        self.default(out)
        return out


IN_TREE_ARGS: Mapping[str, InTreeArgs] = {
    a.kind: a
    for a in (
        InTreeArgs(
            "DefaultPreemptionArgs",
            DEFAULT_PREEMPTION_ARGS,
            default_default_preemption,
            validate_default_preemption,
        ),
        InTreeArgs(
            "InterPodAffinityArgs",
            INTER_POD_AFFINITY_ARGS,
            default_inter_pod_affinity,
            validate_inter_pod_affinity,
        ),
        InTreeArgs(
            "NodeResourcesFitArgs",
            NODE_RESOURCES_FIT_ARGS,
            default_node_resources_fit,
            validate_node_resources_fit,
        ),
        InTreeArgs(
            "PodTopologySpreadArgs",
            POD_TOPOLOGY_SPREAD_ARGS,
            default_pod_topology_spread,
            validate_pod_topology_spread,
        ),
        InTreeArgs(
            "NodeResourcesBalancedAllocationArgs",
            NODE_RESOURCES_BALANCED_ALLOCATION_ARGS,
            default_balanced_allocation,
            validate_balanced_allocation,
        ),
        InTreeArgs(
            "VolumeBindingArgs",
            VOLUME_BINDING_ARGS,
            default_volume_binding,
            validate_volume_binding,
        ),
        InTreeArgs(
            "NodeAffinityArgs", NODE_AFFINITY_ARGS, default_node_affinity, validate_node_affinity
        ),
        InTreeArgs(
            "DynamicResourcesArgs",
            DYNAMIC_RESOURCES_ARGS,
            default_dynamic_resources,
            validate_dynamic_resources,
        ),
        InTreeArgs(
            "NodeResourcesLeastAllocatedArgs",
            NODE_RESOURCES_LEAST_ALLOCATED_ARGS,
            default_v1beta1_resources,
            validate_v1beta1_allocated,
        ),
        InTreeArgs(
            "NodeResourcesMostAllocatedArgs",
            NODE_RESOURCES_MOST_ALLOCATED_ARGS,
            default_v1beta1_resources,
            validate_v1beta1_allocated,
        ),
        InTreeArgs(
            "RequestedToCapacityRatioArgs",
            REQUESTED_TO_CAPACITY_RATIO_ARGS,
            default_v1beta1_resources,
            validate_v1beta1_requested_to_capacity_ratio,
        ),
    )
}
