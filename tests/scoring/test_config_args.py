"""Plugin args: decoding (kind, unknown fields), defaulting and validation for every args kind."""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any

import pytest

from scoring.config import load_configuration, validate_configuration
from scoring.config.catalog import PluginSpec
from scoring.errors import FieldError

HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
PREFIX = "profiles[0].pluginConfig[0].args"


def args_errors(plugin: str, args: Any) -> list[tuple[str, str, str]]:
    """Errors of a default profile whose first pluginConfig entry is ``plugin: args``."""
    config, errors = validate_configuration(
        {**HEADER, "profiles": [{"pluginConfig": [{"name": plugin, "args": args}]}]}
    )
    assert (config is None) == bool(errors)
    out = []
    for e in errors:
        assert e.field.startswith(PREFIX), e
        out.append((e.field[len(PREFIX) :].lstrip("."), e.type, e.detail))
    return out


INVALID = "FieldValueInvalid"
REQUIRED = "FieldValueRequired"
DUPLICATE = "FieldValueDuplicate"
FORBIDDEN = "FieldValueForbidden"
NOT_SUPPORTED = "FieldValueNotSupported"
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

# --------------------------------------------------------------------------------------------
# Decoding


def test_kind_must_match_the_plugin() -> None:
    assert args_errors("NodeResourcesFit", {"kind": "InterPodAffinityArgs"}) == [
        (
            "kind",
            INVALID,
            "args for plugin NodeResourcesFit were not of type "
            "NodeResourcesFitArgs.kubescheduler.config.k8s.io, got "
            "InterPodAffinityArgs.kubescheduler.config.k8s.io",
        )
    ]


def test_api_version_of_another_group_or_version() -> None:
    assert args_errors("VolumeBinding", {"apiVersion": "example.com/v1"}) == [
        (
            "apiVersion",
            INVALID,
            "args for plugin VolumeBinding were not of type "
            "VolumeBindingArgs.kubescheduler.config.k8s.io, got VolumeBindingArgs.example.com",
        )
    ]
    assert args_errors("VolumeBinding", {"apiVersion": "kubescheduler.config.k8s.io/v1beta3"}) == [
        (
            "apiVersion",
            INVALID,
            'decoding args for plugin VolumeBinding: no kind "VolumeBindingArgs" is registered '
            'for version "kubescheduler.config.k8s.io/v1beta3"',
        )
    ]


def test_unknown_fields_in_known_args_are_errors() -> None:
    errors = args_errors(
        "NodeResourcesFit",
        {"scoringStrategy": {"type": "LeastAllocated", "shape": []}, "ignoredResurces": ["x"]},
    )
    assert errors == [
        ("scoringStrategy.shape", INVALID, 'unknown field "shape"'),
        ("ignoredResurces", INVALID, 'unknown field "ignoredResurces"'),
    ]


def test_unknown_fields_in_nested_core_types() -> None:
    errors = args_errors(
        "PodTopologySpread",
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", "x": 1}
            ],
        },
    )
    assert errors == [("defaultConstraints[0].x", INVALID, 'unknown field "x"')]


# --------------------------------------------------------------------------------------------
# DefaultPreemptionArgs


def test_default_preemption() -> None:
    assert args_errors("DefaultPreemption", {"minCandidateNodesPercentage": 101}) == [
        ("minCandidateNodesPercentage", INVALID, "not in valid range [0, 100]")
    ]
    assert args_errors("DefaultPreemption", {"minCandidateNodesAbsolute": -1}) == [
        ("minCandidateNodesAbsolute", INVALID, "not in valid range [0, inf)")
    ]
    assert args_errors(
        "DefaultPreemption", {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}
    ) == [
        (
            "minCandidateNodesPercentage",
            INVALID,
            "cannot be zero at the same time as minCandidateNodesAbsolute",
        ),
        (
            "minCandidateNodesAbsolute",
            INVALID,
            "cannot be zero at the same time as minCandidateNodesPercentage",
        ),
    ]
    assert args_errors("DefaultPreemption", {"minCandidateNodesPercentage": 0}) == []


# --------------------------------------------------------------------------------------------
# InterPodAffinityArgs


@pytest.mark.parametrize("weight", [-1, 101])
def test_inter_pod_affinity_weight_range(weight: int) -> None:
    assert args_errors("InterPodAffinity", {"hardPodAffinityWeight": weight}) == [
        ("hardPodAffinityWeight", INVALID, "not in valid range [0, 100]")
    ]


def test_inter_pod_affinity_zero_weight_is_valid() -> None:
    assert args_errors("InterPodAffinity", {"hardPodAffinityWeight": 0}) == []


# --------------------------------------------------------------------------------------------
# PodTopologySpreadArgs


def constraint(**fields: Any) -> dict[str, Any]:
    return {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", **fields}


def test_pod_topology_spread_defaulting_type() -> None:
    assert args_errors("PodTopologySpread", {"defaultingType": "Other"}) == [
        ("defaultingType", NOT_SUPPORTED, 'supported values: "System", "List"')
    ]
    assert args_errors("PodTopologySpread", {"defaultConstraints": [constraint()]}) == [
        ("defaultingType", INVALID, "when .defaultConstraints are not empty")
    ]


def test_pod_topology_spread_constraints() -> None:
    errors = args_errors(
        "PodTopologySpread",
        {
            "defaultingType": "List",
            "defaultConstraints": [
                constraint(maxSkew=0, topologyKey="", whenUnsatisfiable=""),
                constraint(topologyKey="a/b/c", whenUnsatisfiable="Never"),
                constraint(labelSelector={"matchLabels": {"a": "b"}}),
                constraint(maxSkew=3),
            ],
        },
    )
    assert errors == [
        ("defaultConstraints[0].maxSkew", INVALID, "not in valid range (0, inf)"),
        ("defaultConstraints[0].topologyKey", REQUIRED, "can not be empty"),
        ("defaultConstraints[0].whenUnsatisfiable", REQUIRED, "can not be empty"),
        (
            "defaultConstraints[1].topologyKey",
            INVALID,
            "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  "
            "or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
            "[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. "
            "'example.com/MyName')",
        ),
        (
            "defaultConstraints[1].whenUnsatisfiable",
            NOT_SUPPORTED,
            'supported values: "DoNotSchedule", "ScheduleAnyway"',
        ),
        (
            "defaultConstraints[2].labelSelector",
            FORBIDDEN,
            "constraint must not define a selector, as they deduced for each pod",
        ),
        ("defaultConstraints[3]", DUPLICATE, 'Duplicate value: "{zone, DoNotSchedule}"'),
    ]


# --------------------------------------------------------------------------------------------
# NodeResourcesBalancedAllocationArgs


def test_balanced_allocation() -> None:
    errors = args_errors(
        "NodeResourcesBalancedAllocation",
        {"resources": [{"name": "cpu"}, {"name": "memory", "weight": 2}, {"name": "cpu"}]},
    )
    assert errors == [
        ("resources[1].weight", INVALID, "must be 1"),
        ("resources[2].name", DUPLICATE, 'Duplicate value: "cpu"'),
    ]


# --------------------------------------------------------------------------------------------
# NodeResourcesFitArgs


def fit(strategy: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    args = dict(fields)
    if strategy is not None:
        args["scoringStrategy"] = strategy
    return args


def test_fit_ignored_resources_and_groups() -> None:
    errors = args_errors(
        "NodeResourcesFit",
        fit(ignoredResources=["example.com/ok", "bad name"], ignoredResourceGroups=["a/b", "c"]),
    )
    assert errors == [
        ("ignoredResources[1]", INVALID, NAME_PART),
        ("ignoredResourceGroups[0]", INVALID, "resource group name can't contain '/'"),
    ]


def test_fit_strategy_type_and_weights() -> None:
    errors = args_errors(
        "NodeResourcesFit",
        fit(
            {
                "type": "Best",
                "resources": [{"name": "cpu", "weight": 0}, {"name": "gpu", "weight": 101}],
            }
        ),
    )
    assert errors == [
        (
            "scoringStrategy.type",
            NOT_SUPPORTED,
            'supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        ),
        # weight 0 was defaulted to 1; 101 is out of range
        (
            "scoringStrategy.resources[1].weight",
            INVALID,
            "resource weight of gpu not in valid range (0, 100]",
        ),
    ]


def test_fit_strategy_without_type_is_not_defaulted() -> None:
    # SetDefaults only fills the type when the whole scoringStrategy is missing.
    errors = args_errors("NodeResourcesFit", fit({"resources": [{"name": "cpu", "weight": 2}]}))
    assert errors == [
        (
            "scoringStrategy.type",
            NOT_SUPPORTED,
            'supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        )
    ]


def test_fit_requested_to_capacity_ratio() -> None:
    assert args_errors("NodeResourcesFit", fit({"type": "RequestedToCapacityRatio"})) == [
        (
            "scoringStrategy.requestedToCapacityRatio",
            REQUIRED,
            "must be specified when type is RequestedToCapacityRatio",
        )
    ]
    assert args_errors(
        "NodeResourcesFit",
        fit({"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {}}),
    ) == [
        (
            "scoringStrategy.requestedToCapacityRatio.shape",
            REQUIRED,
            "at least one point must be specified",
        )
    ]
    shape = [
        {"utilization": 10, "score": 11},
        {"utilization": 10, "score": 2},
        {"utilization": 101, "score": -1},
    ]
    assert args_errors(
        "NodeResourcesFit",
        fit({"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {"shape": shape}}),
    ) == [
        (
            "scoringStrategy.requestedToCapacityRatio.shape[1].utilization",
            INVALID,
            "values must be sorted in increasing order",
        ),
        (
            "scoringStrategy.requestedToCapacityRatio.shape[0].score",
            INVALID,
            "not in valid range [0, 10]",
        ),
        (
            "scoringStrategy.requestedToCapacityRatio.shape[2].utilization",
            INVALID,
            "not in valid range [0, 100]",
        ),
        (
            "scoringStrategy.requestedToCapacityRatio.shape[2].score",
            INVALID,
            "not in valid range [0, 10]",
        ),
    ]


def test_fit_requested_to_capacity_ratio_forbidden_for_other_types() -> None:
    errors = args_errors(
        "NodeResourcesFit",
        fit({"type": "MostAllocated", "requestedToCapacityRatio": {"shape": []}}),
    )
    assert errors == [
        (
            "scoringStrategy.requestedToCapacityRatio",
            FORBIDDEN,
            "must be nil when type is not RequestedToCapacityRatio",
        )
    ]


def test_fit_valid_requested_to_capacity_ratio() -> None:
    config = load_configuration(
        {
            **HEADER,
            "profiles": [
                {
                    "pluginConfig": [
                        {
                            "name": "NodeResourcesFit",
                            "args": fit(
                                {
                                    "type": "RequestedToCapacityRatio",
                                    "resources": [{"name": "nvidia.com/gpu", "weight": 3}],
                                    "requestedToCapacityRatio": {
                                        "shape": [
                                            {"utilization": 0, "score": 0},
                                            {"utilization": 100, "score": 10},
                                        ]
                                    },
                                }
                            ),
                        }
                    ]
                }
            ],
        }
    )
    strategy = config.profiles[0].plugin_args["NodeResourcesFit"]["scoringStrategy"]
    assert strategy["resources"] == [{"name": "nvidia.com/gpu", "weight": 3}]
    assert strategy["requestedToCapacityRatio"]["shape"][1] == {"utilization": 100, "score": 10}


# --------------------------------------------------------------------------------------------
# VolumeBindingArgs


def test_volume_binding() -> None:
    assert args_errors("VolumeBinding", {"bindTimeoutSeconds": -1}) == [
        (
            "bindTimeoutSeconds",
            INVALID,
            "invalid BindTimeoutSeconds, should not be a negative value",
        )
    ]
    # StorageCapacityScoring is off in 1.35: any shape, even empty, is rejected.
    for shape in ([], [{"utilization": 0, "score": 10}]):
        assert args_errors("VolumeBinding", {"shape": shape}) == [
            (
                "shape",
                INVALID,
                "unexpected field `shape`, remove it or turn on the feature gate "
                "StorageCapacityScoring",
            )
        ]
    assert args_errors("VolumeBinding", {"bindTimeoutSeconds": 0}) == []


# --------------------------------------------------------------------------------------------
# NodeAffinityArgs


def test_node_affinity_required_terms() -> None:
    selector = {
        "nodeSelectorTerms": [
            {},  # an empty term is skipped
            {
                "matchExpressions": [
                    {"key": "zone", "operator": "Near", "values": ["a"]},
                    {"key": "zone", "operator": "In"},
                    {"key": "cores", "operator": "Gt", "values": ["x", "1"]},
                    {"key": "gpu", "operator": "Exists", "values": ["a"]},
                    {"key": "-bad", "operator": "In", "values": ["ok", "not ok"]},
                ],
                "matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["a", "b"]},
                    {"key": "metadata.name", "operator": "Exists"},
                ],
            },
        ]
    }
    errors = args_errors(
        "NodeAffinity",
        {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": selector}},
    )
    base = "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1]"
    value_error = (
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
        "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    )
    assert errors == [
        (
            f"{base}.matchExpressions[0].operator",
            NOT_SUPPORTED,
            'supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"',
        ),
        (
            f"{base}.matchExpressions[1].values",
            INVALID,
            "for 'in', 'notin' operators, values set can't be empty",
        ),
        (
            f"{base}.matchExpressions[2].values",
            INVALID,
            "for 'Gt', 'Lt' operators, exactly one value is required",
        ),
        (
            f"{base}.matchExpressions[2].values[0]",
            INVALID,
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            f"{base}.matchExpressions[3].values",
            INVALID,
            "values set must be empty for exists and does not exist",
        ),
        (f"{base}.matchExpressions[4].key", INVALID, NAME_PART),
        (f"{base}.matchExpressions[4].values[1][-bad]", INVALID, value_error),
        (f"{base}.matchFields[0].values", INVALID, "must have one element"),
        (f"{base}.matchFields[1].operator", NOT_SUPPORTED, 'supported values: "In", "NotIn"'),
    ]


def test_node_affinity_preferred_terms() -> None:
    preferred = [
        {"weight": 0, "preference": {"matchExpressions": [{"key": "a", "operator": "Bad"}]}},
        {"weight": 5, "preference": {"matchExpressions": [{"key": "a", "operator": "Bad"}]}},
    ]
    errors = args_errors(
        "NodeAffinity",
        {"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}},
    )
    # zero-weight terms are skipped; there is no ".preference" in the path
    assert [e[0] for e in errors] == [
        "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[1].matchExpressions[0].operator"
    ]


def test_node_affinity_valid() -> None:
    args = {
        "addedAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}
                ]
            }
        }
    }
    assert args_errors("NodeAffinity", args) == []


# --------------------------------------------------------------------------------------------
# DynamicResourcesArgs


def test_dynamic_resources() -> None:
    assert args_errors("DynamicResources", {"filterTimeout": "-1s"}) == [
        ("filterTimeout", INVALID, "must be zero or positive")
    ]
    # DRADeviceBindingConditions is alpha (off) in 1.35
    assert args_errors("DynamicResources", {"bindingTimeout": "60s"}) == [
        (
            "bindingTimeout",
            FORBIDDEN,
            "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled",
        )
    ]
    assert args_errors("DynamicResources", {"filterTimeout": "0s"}) == []


# --------------------------------------------------------------------------------------------
# Out-of-tree plugins: lazily resolved args modules


def _fake_args_module() -> types.ModuleType:
    module = types.ModuleType("fake_args")

    def default_args(args: Mapping[str, Any]) -> dict[str, Any]:
        return {"threshold": 65, **args}

    def validate_args(args: Mapping[str, Any], path: str) -> list[FieldError]:
        if args["threshold"] > 100:
            return [FieldError(f"{path}.threshold", INVALID, "too high", args["threshold"])]
        return []

    module.default_args = default_args  # type: ignore[attr-defined]
    module.validate_args = validate_args  # type: ignore[attr-defined]
    return module


def _limit_aware_profile(args: Any) -> dict[str, Any]:
    return {
        **HEADER,
        "profiles": [
            {
                "plugins": {"multiPoint": {"enabled": [{"name": "LimitAware", "weight": 2}]}},
                "pluginConfig": [{"name": "LimitAware", "args": args}],
            }
        ],
    }


def test_out_of_tree_args_module_defaults_and_validates(monkeypatch: pytest.MonkeyPatch) -> None:
    requested: list[str] = []
    fake = _fake_args_module()

    def resolve(spec: PluginSpec) -> types.ModuleType:
        requested.append(spec.args_module or "")
        return fake

    monkeypatch.setattr(PluginSpec, "_module", resolve)
    config = load_configuration(
        _limit_aware_profile({"apiVersion": "kubescheduler.config.k8s.io/v1"})
    )
    assert config.profiles[0].plugin_args["LimitAware"] == {"threshold": 65}
    assert "scoring.plugins.limitaware.args" in requested
    _, errors = validate_configuration(_limit_aware_profile({"threshold": 101}))
    assert [(e.field, e.detail) for e in errors] == [
        ("profiles[0].pluginConfig[0].args.threshold", "too high")
    ]


def test_out_of_tree_default_args_added_for_enabled_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PluginSpec, "_module", lambda spec: _fake_args_module())
    config = load_configuration(
        {
            **HEADER,
            "profiles": [
                {"plugins": {"multiPoint": {"enabled": [{"name": "LoadAwareScheduling"}]}}}
            ],
        }
    )
    assert config.profiles[0].plugin_args["LoadAwareScheduling"] == {"threshold": 65}
    entry = next(
        c
        for c in config.document["profiles"][0]["pluginConfig"]
        if c["name"] == "LoadAwareScheduling"
    )
    assert entry["args"]["kind"] == "LoadAwareSchedulingArgs"
