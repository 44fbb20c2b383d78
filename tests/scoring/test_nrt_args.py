"""NodeResourceTopologyMatchArgs: v1 defaults and the plugin's validation."""

from __future__ import annotations

from typing import Any

import pytest

from scoring.errors import INVALID, TYPE_INVALID
from scoring.plugins.nrt.args import default_args, validate_args

PATH = "profiles[0].pluginConfig[0].args"


def test_empty_args_get_every_v1_default() -> None:
    assert default_args({}) == {
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        },
        "cache": {
            "foreignPodsDetect": "All",
            "resyncMethod": "Autodetect",
            "informerMode": "Dedicated",
        },
        "preemptionMode": "Disabled",
    }


def test_given_values_are_kept_and_only_gaps_filled() -> None:
    args = {
        "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "gpu"}]},
        "cacheResyncPeriodSeconds": 10,
        "cache": {"foreignPodsDetect": "None", "resyncScope": "OnlyResources"},
        "preemptionMode": "Enabled",
    }
    out = default_args(args)
    assert out["scoringStrategy"] == {
        "type": "MostAllocated",
        "resources": [{"name": "gpu", "weight": 1}],
    }
    assert out["cache"] == {
        "foreignPodsDetect": "None",
        "resyncMethod": "Autodetect",
        "informerMode": "Dedicated",
        "resyncScope": "OnlyResources",
    }
    assert out["cacheResyncPeriodSeconds"] == 10
    assert out["preemptionMode"] == "Enabled"
    assert args["scoringStrategy"]["resources"] == [{"name": "gpu"}]  # input untouched
    assert default_args(out) == out


def test_a_strategy_without_resources_gets_the_default_resources_but_keeps_its_type() -> None:
    out = default_args({"scoringStrategy": {"type": "LeastNUMANodes"}})
    assert out["scoringStrategy"]["type"] == "LeastNUMANodes"
    assert [r["name"] for r in out["scoringStrategy"]["resources"]] == ["cpu", "memory"]


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        ({}, []),
        ({"scoringStrategy": {"type": "LeastNUMANodes"}}, []),
        (
            {"scoringStrategy": {"type": "Fancy"}},
            [(f"{PATH}.scoringStrategy.type", INVALID, "invalid ScoringStrategyType")],
        ),
        (
            {"scoringStrategy": {"resources": []}},  # type left empty
            [(f"{PATH}.scoringStrategy.type", INVALID, "invalid ScoringStrategyType")],
        ),
        (
            {"preemptionMode": "Sometimes"},
            [(f"{PATH}.preemptionMode", INVALID, "invalid PreemptionMode")],
        ),
        # Weights are not validated upstream: negative ones count as 1 at runtime.
        (
            {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": -4}],
                }
            },
            [],
        ),
        (
            {
                "scoringStrategy": {
                    "type": "MostAllocated",
                    "resources": [{"name": "cpu", "weight": "1"}],
                }
            },
            [(f"{PATH}.scoringStrategy.resources[0].weight", TYPE_INVALID, "expected an integer")],
        ),
        (
            {"cacheResyncPeriodSeconds": "5s", "discardReservedNodes": "yes"},
            [
                (f"{PATH}.cacheResyncPeriodSeconds", TYPE_INVALID, "expected an integer"),
                (f"{PATH}.discardReservedNodes", TYPE_INVALID, "expected a boolean"),
            ],
        ),
    ],
)
def test_validation(args: dict[str, Any], errors: list[tuple[str, str, str]]) -> None:
    got = [(e.field, e.type, e.detail) for e in validate_args(args, PATH)]
    assert got == errors


def test_the_invalid_value_is_reported() -> None:
    (error,) = validate_args({"scoringStrategy": {"type": "Fancy"}}, PATH)
    assert error.bad_value == "Fancy"
