"""LoadAwareSchedulingArgs: v1 defaulting, upstream validation messages/paths, strict decoding,
and Go duration text (pkg/scheduler/apis/config/v1/defaults.go,
validation/validation_pluginargs.go, Go's time.ParseDuration / Duration.String)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.durations import (
    HOUR,
    MICROSECOND,
    MILLISECOND,
    MINUTE,
    SECOND,
    DurationError,
    format_duration,
    parse_duration,
)
from scoring.errors import INVALID, NOT_FOUND, NOT_SUPPORTED, TYPE_INVALID, FieldError
from scoring.plugins.loadaware.args import LoadAwareArgs, default_args, validate_args

PATH = "profiles[0].pluginConfig[0].args"


def errors(args: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(e.field, e.type, e.detail) for e in validate_args(args, PATH)]


# -- defaulting ------------------------------------------------------------------


def test_empty_args_get_upstream_defaults() -> None:
    assert default_args({}) == {
        "filterExpiredNodeMetrics": True,
        "enableScheduleWhenNodeMetricsExpired": False,
        "nodeMetricExpirationSeconds": 180,
        "resourceWeights": {"cpu": 1, "memory": 1},
        "usageThresholds": {"cpu": 65, "memory": 95},
        "estimatedScalingFactors": {"cpu": 85, "memory": 70},
    }


def test_resource_weights_default_only_without_dominant_weight() -> None:
    assert "resourceWeights" not in default_args({"dominantResourceWeight": 10})
    assert default_args({"dominantResourceWeight": 0})["resourceWeights"] == {"cpu": 1, "memory": 1}
    assert default_args({"resourceWeights": {"cpu": 3}})["resourceWeights"] == {"cpu": 3}


def test_usage_thresholds_are_replaced_not_merged() -> None:
    """A non-empty map is kept as is: {memory: 0} leaves cpu unchecked (disables the filter)."""
    assert default_args({"usageThresholds": {"memory": 0}})["usageThresholds"] == {"memory": 0}
    assert default_args({"usageThresholds": {}})["usageThresholds"] == {"cpu": 65, "memory": 95}


def test_scaling_factors_gain_missing_cpu_and_memory_only() -> None:
    assert default_args({"estimatedScalingFactors": {}})["estimatedScalingFactors"] == {
        "cpu": 85,
        "memory": 70,
    }
    factors = default_args({"estimatedScalingFactors": {"cpu": 100, "gpu": 50}})
    assert factors["estimatedScalingFactors"] == {"cpu": 100, "gpu": 50, "memory": 70}


def test_defaulting_does_not_touch_the_input_and_keeps_explicit_values() -> None:
    given_args = {"usageThresholds": {"cpu": 50}, "filterExpiredNodeMetrics": False}
    out = default_args(given_args)
    assert given_args == {"usageThresholds": {"cpu": 50}, "filterExpiredNodeMetrics": False}
    assert out["filterExpiredNodeMetrics"] is False
    out["usageThresholds"]["cpu"] = 1
    assert given_args["usageThresholds"]["cpu"] == 50


def test_durations_are_written_as_go_prints_them() -> None:
    out = default_args(
        {"aggregated": {"usageAggregatedDuration": "5m", "scoreAggregatedDuration": "90m"}}
    )
    assert out["aggregated"] == {
        "usageAggregatedDuration": "5m0s",
        "scoreAggregatedDuration": "1h30m0s",
    }


# -- validation ------------------------------------------------------------------


def test_expiration_path_is_upstreams_misspelling() -> None:
    assert errors({"nodeMetricExpirationSeconds": 0}) == [
        (
            f"{PATH}.nodeMetricExpiredSeconds",
            INVALID,
            "nodeMetricExpiredSeconds should be a positive value",
        )
    ]


@pytest.mark.parametrize(
    ("weights", "detail"),
    [
        ({"cpu": 0}, "resource Weight of cpu should be a positive value, got 0"),
        ({"cpu": -1}, "resource Weight of cpu should be a positive value, got -1"),
        ({"cpu": 101}, "resource Weight of cpu should be less than 100, got 101"),
    ],
)
def test_resource_weights_range(weights: dict[str, int], detail: str) -> None:
    args = {"resourceWeights": weights, "estimatedScalingFactors": {"cpu": 85}}
    assert errors(args) == [(f"{PATH}.resourceWeights", INVALID, detail)]


def test_one_hundred_is_allowed_everywhere() -> None:
    args = {
        "resourceWeights": {"cpu": 100},
        "dominantResourceWeight": 100,
        "usageThresholds": {"cpu": 100},
        "estimatedScalingFactors": {"cpu": 100},
        "aggregated": {"usageThresholds": {"cpu": 100}},
    }
    assert errors(args) == []


def test_zero_threshold_is_valid_but_zero_factor_is_not() -> None:
    assert errors({"usageThresholds": {"cpu": 0}}) == []
    assert errors({"estimatedScalingFactors": {"cpu": 0}}) == [
        (
            f"{PATH}.estimatedScalingFactors",
            INVALID,
            "estimated resource ScalingFactor of cpu should be a positive value, got 0",
        )
    ]


def test_only_the_first_bad_map_entry_is_reported() -> None:
    reported = errors({"usageThresholds": {"memory": 101, "cpu": -5}})
    assert reported == [
        (
            f"{PATH}.usageThresholds",
            INVALID,
            "resource Threshold of cpu should be a positive value, got -5",
        )
    ]


def test_dominant_resource_weight_bounds() -> None:
    assert errors({"dominantResourceWeight": -1}) == [
        (
            f"{PATH}.dominantResourceWeight",
            INVALID,
            "dominantResourceWeight should not be a negative value",
        )
    ]
    assert errors({"dominantResourceWeight": 101}) == [
        (
            f"{PATH}.dominantResourceWeight",
            INVALID,
            "dominantResourceWeight should be less than 100",
        )
    ]


def test_weighted_resource_needs_a_scaling_factor() -> None:
    reported = validate_args(
        {
            "resourceWeights": {"cpu": 1, "nvidia.com/gpu": 1, "zz": 1},
            "estimatedScalingFactors": {"cpu": 85},
        },
        PATH,
    )
    assert reported == [
        FieldError(
            f"{PATH}.estimatedScalingFactors",
            NOT_FOUND,
            'Not found: "nvidia.com/gpu"',
            "nvidia.com/gpu",
        )
    ]


def test_prod_thresholds_are_not_validated() -> None:
    assert errors({"prodUsageThresholds": {"cpu": 500, "memory": -3}}) == []


def test_aggregated_rules() -> None:
    reported = errors(
        {
            "aggregated": {
                "usageThresholds": {"cpu": 120},
                "usageAggregationType": "p42",
                "usageAggregatedDuration": "-1m",
                "scoreAggregationType": "max",
                "scoreAggregatedDuration": "-5s",
            }
        }
    )
    supported = 'supported values: "avg", "p50", "p90", "p95", "p99"'
    assert reported == [
        (
            f"{PATH}.aggregated.usageThresholds",
            INVALID,
            "resource Threshold of cpu should be less than 100, got 120",
        ),
        (f"{PATH}.aggregated.usageAggregationType", NOT_SUPPORTED, supported),
        (f"{PATH}.aggregated.usageAggregatedDuration", INVALID, "duration must be >= 0"),
        (f"{PATH}.aggregated.scoreAggregationType", NOT_SUPPORTED, supported),
        (f"{PATH}.aggregated.scoreAggregatedDuration", INVALID, "duration must be >= 0"),
    ]


def test_errors_come_in_upstream_order_and_all_at_once() -> None:
    fields = [
        e[0].removeprefix(PATH + ".")
        for e in errors(
            {
                "nodeMetricExpirationSeconds": -1,
                "resourceWeights": {"cpu": 0, "gpu": 1},
                "dominantResourceWeight": 200,
                "usageThresholds": {"cpu": -1},
                "estimatedScalingFactors": {"cpu": 200},
                "aggregated": {"usageAggregatedDuration": "-1s"},
            }
        )
    ]
    assert fields == [
        "nodeMetricExpiredSeconds",
        "resourceWeights",
        "dominantResourceWeight",
        "usageThresholds",
        "estimatedScalingFactors",
        "estimatedScalingFactors",
        "aggregated.usageAggregatedDuration",
    ]


def test_unknown_fields_are_named() -> None:
    reported = errors({"usageThreshold": {"cpu": 1}, "aggregated": {"usageType": "p95"}})
    assert reported == [
        (f"{PATH}.usageThreshold", INVALID, 'unknown field "usageThreshold"'),
        (f"{PATH}.aggregated.usageType", INVALID, 'unknown field "usageType"'),
    ]


def test_type_meta_is_accepted() -> None:
    meta = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "LoadAwareSchedulingArgs"}
    assert errors(meta) == []


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"nodeMetricExpirationSeconds": "180"}, "nodeMetricExpirationSeconds"),
        ({"filterExpiredNodeMetrics": "yes"}, "filterExpiredNodeMetrics"),
        ({"usageThresholds": {"cpu": "65"}}, "usageThresholds[cpu]"),
        ({"usageThresholds": {"cpu": 65.5}}, "usageThresholds[cpu]"),
        ({"usageThresholds": ["cpu"]}, "usageThresholds"),
        ({"estimator": 3}, "estimator"),
        ({"supportedResources": "gpu"}, "supportedResources"),
        ({"aggregated": {"scoreAggregatedDuration": 300}}, "aggregated.scoreAggregatedDuration"),
        ({"dominantResourceWeight": 2**63}, "dominantResourceWeight"),
    ],
)
def test_wrong_json_types_are_reported(args: dict[str, Any], field: str) -> None:
    reported = validate_args(args, PATH)
    assert [(e.field, e.type) for e in reported] == [(f"{PATH}.{field}", TYPE_INVALID)]


def test_integral_floats_from_yaml_are_integers() -> None:
    assert errors({"usageThresholds": {"cpu": 65.0}}) == []


def test_malformed_duration_uses_gos_message() -> None:
    assert errors({"aggregated": {"usageAggregatedDuration": "5 minutes"}}) == [
        (
            f"{PATH}.aggregated.usageAggregatedDuration",
            INVALID,
            'time: unknown unit " minutes" in duration "5 minutes"',
        )
    ]


def test_typed_args_and_resource_vector() -> None:
    args = LoadAwareArgs.from_v1(
        default_args(
            {
                "usageThresholds": {"memory": 90},
                "prodUsageThresholds": {"nvidia.com/gpu": 50},
                "aggregated": {
                    "usageThresholds": {"ephemeral-storage": 70},
                    "scoreAggregationType": "p95",
                },
                "supportedResources": ["kubernetes.io/batch-cpu"],
                "scoreAccordingProdUsage": None,
            }
        )
    )
    assert args.resource_names == (
        "cpu",
        "ephemeral-storage",
        "kubernetes.io/batch-cpu",
        "memory",
        "nvidia.com/gpu",
    )
    assert args.score_according_prod_usage is False
    assert args.aggregated is not None
    assert args.aggregated.score_aggregated_duration == 0
    assert not args.aggregated.filters  # thresholds without a type: no aggregated filter


# -- Go durations ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "nanoseconds"),
    [
        ("0", 0),
        ("5m", 5 * MINUTE),
        ("5m0s", 5 * MINUTE),
        ("1h30m", 90 * MINUTE),
        ("-1m0s", -MINUTE),
        ("+2s", 2 * SECOND),
        ("1.5h", 90 * MINUTE),
        (".5s", 500 * MILLISECOND),
        ("1.s", SECOND),
        ("300ms", 300 * MILLISECOND),
        ("7us", 7 * MICROSECOND),
        ("7\u00b5s", 7 * MICROSECOND),
        ("7\u03bcs", 7 * MICROSECOND),
        ("1h1m1s1ms1us1ns", HOUR + MINUTE + SECOND + MILLISECOND + MICROSECOND + 1),
        ("2562047h47m16.854775807s", 2**63 - 1),
        ("-2562047h47m16.854775808s", -(2**63)),
        ("0.3333333333333333333h", 1_200_000_000_000),
    ],
)
def test_parse_duration(text: str, nanoseconds: int) -> None:
    assert parse_duration(text) == nanoseconds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", 'time: invalid duration ""'),
        ("5", 'time: missing unit in duration "5"'),
        ("5x", 'time: unknown unit "x" in duration "5x"'),
        (".s", 'time: invalid duration ".s"'),
        ("-", 'time: invalid duration "-"'),
        ("1h-1m", 'time: unknown unit "h-" in duration "1h-1m"'),
        ("2562047h47m16.854775808s", 'time: invalid duration "2562047h47m16.854775808s"'),
        ("9223372036854775808ns", 'time: invalid duration "9223372036854775808ns"'),
        ("1\u00e9", 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"'),
    ],
)
def test_parse_duration_errors(text: str, message: str) -> None:
    with pytest.raises(DurationError) as raised:
        parse_duration(text)
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("nanoseconds", "text"),
    [
        (0, "0s"),
        (1, "1ns"),
        (1500, "1.5\u00b5s"),
        (1_500_000, "1.5ms"),
        (SECOND, "1s"),
        (1_500_000_000, "1.5s"),
        (5 * MINUTE, "5m0s"),
        (90 * MINUTE, "1h30m0s"),
        (-MINUTE, "-1m0s"),
        (2**63 - 1, "2562047h47m16.854775807s"),
        (-(2**63), "-2562047h47m16.854775808s"),
    ],
)
def test_format_duration(nanoseconds: int, text: str) -> None:
    assert format_duration(nanoseconds) == text


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_format_then_parse_round_trips(nanoseconds: int) -> None:
    assert parse_duration(format_duration(nanoseconds)) == nanoseconds
