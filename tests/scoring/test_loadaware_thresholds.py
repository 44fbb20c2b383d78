"""Threshold resolution: args vs the node annotation ``scheduling.koordinator.sh/usage-thresholds``.

helper.go ``generateUsageThresholdsFilterProfile``: each part present in the annotation replaces
the args' part as a whole (no per-resource merge); an unparseable annotation is ignored.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scoring.durations import MINUTE
from scoring.plugins.loadaware.args import LoadAwareArgs, default_args
from scoring.plugins.loadaware.thresholds import (
    FROM_ANNOTATION,
    FROM_ARGS,
    AggregatedThresholds,
    ThresholdProfile,
    args_profile,
    resolve,
)
from tests.scoring.loadaware_vectors import CORES, GI, metric, node, pod, vector, verdicts

KEY = "scheduling.koordinator.sh/usage-thresholds"
RESOURCES = ("cpu", "memory")


def base(args: dict[str, Any] | None = None) -> ThresholdProfile:
    typed = LoadAwareArgs.from_v1(default_args(args or {}))
    return args_profile(typed, typed.resource_names)


def test_args_profile() -> None:
    profile = base({"prodUsageThresholds": {"cpu": 55}})
    assert (profile.usage, profile.prod, profile.aggregated) == ((65, 95), (55, 0), None)
    assert profile.usage_source == profile.prod_source == FROM_ARGS


def test_args_aggregated_profile_needs_thresholds_and_type() -> None:
    assert base({"aggregated": {"usageThresholds": {"cpu": 60}}}).aggregated is None
    assert base({"aggregated": {"usageAggregationType": "p95"}}).aggregated is None
    agg = base({"aggregated": {"usageThresholds": {"cpu": 60}, "usageAggregationType": "p95"}})
    assert agg.aggregated == AggregatedThresholds((60, 0), "p95", 0, FROM_ARGS)


def test_annotation_replaces_the_whole_map() -> None:
    profile = resolve(base(), '{"usageThresholds":{"memory":60}}', RESOURCES)
    assert profile.usage == (0, 60)  # cpu is no longer checked
    assert profile.usage_source == FROM_ANNOTATION


def test_parts_missing_from_the_annotation_keep_the_args() -> None:
    args = base({"prodUsageThresholds": {"cpu": 55}, "usageThresholds": {"cpu": 70}})
    profile = resolve(args, '{"prodUsageThresholds":{"memory":80}}', RESOURCES)
    assert (profile.usage, profile.usage_source) == ((70, 0), FROM_ARGS)
    assert (profile.prod, profile.prod_source) == ((0, 80), FROM_ANNOTATION)


def test_annotation_aggregated_without_duration_means_longest_window() -> None:
    text = json.dumps(
        {"aggregatedUsage": {"usageThresholds": {"cpu": 60}, "usageAggregationType": "p99"}}
    )
    profile = resolve(base(), text, RESOURCES)
    assert profile.aggregated == AggregatedThresholds((60, 0), "p99", 0, FROM_ANNOTATION)
    assert profile.usage == (65, 95)  # usage thresholds stay those of the args


def test_annotation_aggregated_with_duration() -> None:
    text = json.dumps(
        {
            "aggregatedUsage": {
                "usageThresholds": {"cpu": 60},
                "usageAggregationType": "p95",
                "usageAggregatedDuration": "5m",
            }
        }
    )
    profile = resolve(base(), text, RESOURCES)
    assert profile.aggregated == AggregatedThresholds((60, 0), "p95", 5 * MINUTE, FROM_ANNOTATION)


@pytest.mark.parametrize(
    "text",
    [
        '{"aggregatedUsage":{"usageThresholds":{"cpu":60}}}',
        '{"aggregatedUsage":{"usageAggregationType":"p95"}}',
        "{}",
        '{"usageThresholds":{}}',
        "null",
        '{"somethingElse": 1}',
    ],
)
def test_annotations_that_change_nothing(text: str) -> None:
    args = base()
    profile = resolve(args, text, RESOURCES)
    assert (profile.usage, profile.prod, profile.aggregated) == (args.usage, args.prod, None)
    assert profile.annotation_error is None


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        '{"usageThresholds":{"cpu":"60"}}',
        '{"usageThresholds":{"cpu":60.5}}',
        '{"usageThresholds":{"cpu":1e2}}',
        '{"usageThresholds":{"cpu":NaN}}',
        '{"aggregatedUsage":{"usageThresholds":{"cpu":60},"usageAggregationType":"p95","usageAggregatedDuration":"5"}}',
        '{"aggregatedUsage":{"usageAggregationType":95}}',
    ],
)
def test_invalid_annotations_fall_back_to_args(text: str) -> None:
    args = base()
    profile = resolve(args, text, RESOURCES)
    assert (profile.usage, profile.usage_source) == (args.usage, FROM_ARGS)
    assert profile.annotation_error


def test_go_json_quirks() -> None:
    # Field names match case-insensitively; repeated keys decode into the same map (merge).
    profile = resolve(
        base(), '{"UsageThresholds":{"cpu":50},"usagethresholds":{"memory":60}}', RESOURCES
    )
    assert profile.usage == (50, 60)
    # A null map value is the zero value.
    assert resolve(base(), '{"usageThresholds":{"cpu":null,"memory":1}}', RESOURCES).usage == (0, 1)


def test_resources_outside_the_vector_are_ignored() -> None:
    """``{"nvidia.com/gpu": 50}`` still replaces the map, leaving cpu and memory at 0."""
    profile = resolve(base(), '{"usageThresholds":{"nvidia.com/gpu":50}}', RESOURCES)
    assert profile.usage == (0, 0)


# -- through the filter ---------------------------------------------------------------------------

BUSY = metric({"cpu": 90 * CORES, "memory": 500 * GI})


def annotated(text: str) -> dict[str, Any]:
    return node(annotations={KEY: text})


def test_replace_not_merge_through_the_filter() -> None:
    cases = {
        "a": annotated('{"usageThresholds":{"memory":99}}'),  # cpu unchecked, memory 98% passes
        "b": annotated('{"usageThresholds":{"cpu":99}}'),  # memory unchecked, cpu 94% passes
        "c": annotated('{"usageThresholds":{"memory":90}}'),  # memory 98% > 90
        "d": annotated("not json"),  # args: cpu 94% > 65
    }
    nodes = [{**n, "name": name} for name, n in cases.items()]
    metrics = [{**BUSY, "node": name} for name in cases]
    result = verdicts(vector({}, nodes=nodes, metrics=metrics, incoming=pod()))
    assert result == {
        "a": None,
        "b": None,
        "c": "node(s) memory usage exceed threshold",
        "d": "node(s) cpu usage exceed threshold",
    }


def test_gpu_only_annotation_disables_the_filter_even_with_an_expired_metric() -> None:
    """All-zero thresholds pass before any NodeMetric check (also the expiry check)."""
    v = vector(
        {},
        nodes=[annotated('{"usageThresholds":{"nvidia.com/gpu":50}}')],
        metrics=[{**BUSY, "update_age_seconds": 3600}],
        incoming=pod(),
    )
    assert verdicts(v) == {"test-node-1": None}


def test_supported_resources_make_annotation_resources_count() -> None:
    gpu_node = node(allocatable={"cpu": 96 * CORES, "memory": 512 * GI, "nvidia.com/gpu": 8})
    gpu_node["annotations"] = {KEY: '{"usageThresholds":{"nvidia.com/gpu":50}}'}
    usage = metric({"cpu": 0, "memory": 0, "nvidia.com/gpu": 6})
    unsupported = vector({}, nodes=[gpu_node], metrics=[usage], incoming=pod())
    supported = vector(
        {"supportedResources": ["nvidia.com/gpu"]},
        nodes=[gpu_node],
        metrics=[usage],
        incoming=pod(),
    )
    assert verdicts(unsupported) == {"test-node-1": None}
    assert verdicts(supported) == {"test-node-1": "node(s) nvidia.com/gpu usage exceed threshold"}
