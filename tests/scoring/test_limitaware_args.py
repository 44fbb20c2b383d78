"""LimitAwareArgs: Koordinator's defaults (plus the ratio default) and validation."""

from __future__ import annotations

from typing import Any

import pytest

from scoring.errors import INVALID, TYPE_INVALID
from scoring.plugins.limitaware.args import default_args, validate_args

PATH = "profiles[0].pluginConfig[2].args"


def test_defaults() -> None:
    assert default_args({}) == {
        "scoringResourceWeights": {"cpu": 1, "memory": 1},
        "defaultLimitToAllocatableRatio": {"cpu": 100, "memory": 100},
    }


def test_zero_weights_become_one_and_the_ratio_follows_the_weights() -> None:
    args = {"scoringResourceWeights": {"cpu": 0, "example.com/gpu": 5}}
    assert default_args(args) == {
        "scoringResourceWeights": {"cpu": 1, "example.com/gpu": 5},
        "defaultLimitToAllocatableRatio": {"cpu": 100, "example.com/gpu": 100},
    }
    assert args["scoringResourceWeights"]["cpu"] == 0  # input untouched


def test_a_configured_ratio_is_kept_as_given() -> None:
    args = {"defaultLimitToAllocatableRatio": {"cpu": "150%"}}
    assert default_args(args)["defaultLimitToAllocatableRatio"] == {"cpu": "150%"}


@pytest.mark.parametrize(
    ("args", "errors"),
    [
        ({}, []),
        ({"scoringResourceWeights": {"cpu": 100}}, []),
        (
            {"scoringResourceWeights": {"cpu": 101, "memory": -1}},
            # Upstream stops at the first bad weight it meets; here the first by name.
            [(INVALID, "resource Weight of cpu should be less than 100, got 101")],
        ),
        (
            {"scoringResourceWeights": {"memory": -1}},
            [(INVALID, "resource Weight of memory should be a positive value, got -1")],
        ),
        ({"scoringResourceWeights": {"cpu": "1"}}, [(TYPE_INVALID, "expected an integer")]),
        ({"defaultLimitToAllocatableRatio": {"cpu": 120, "memory": "90%"}}, []),
        (
            {"defaultLimitToAllocatableRatio": {"cpu": 1.5}},
            [(TYPE_INVALID, "expected an int32 or a percentage string")],
        ),
        (
            {"defaultLimitToAllocatableRatio": {"cpu": 2**31}},
            [(TYPE_INVALID, "expected an int32 or a percentage string")],
        ),
    ],
)
def test_validation(args: dict[str, Any], errors: list[tuple[str, str]]) -> None:
    got = validate_args(args, PATH)
    assert [(e.type, e.detail) for e in got] == errors
    assert all(e.field.startswith(f"{PATH}.") for e in got)


def test_weight_errors_point_at_the_map() -> None:
    (error,) = validate_args({"scoringResourceWeights": {"cpu": 0, "memory": 200}}, PATH)
    assert error.field == f"{PATH}.scoringResourceWeights"
    assert error.bad_value == {"cpu": 1, "memory": 200}
