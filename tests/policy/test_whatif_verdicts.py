"""What-if verdicts: what each row compares, and when it does not compare at all."""

from __future__ import annotations

from typing import Any

import pytest

from policy.web.presenters.whatif import NOISE_POINTS, Metric, metrics


def run(**usage: Any) -> dict[str, Any]:
    cpu = {
        "mean": 0.4,
        "stddev": 0.2,
        "max": 0.8,
        "overThreshold": 5,
        "limitOversubscribed": 0,
        "thresholds": {"65": 10},
        **usage,
    }
    return {"placed": 10, "unschedulable": 0, "utilization": {"cpu": cpu}}


def row(a: dict[str, Any], b: dict[str, Any], name: str) -> Metric:
    return next(m for m in metrics([a, b], ["cpu"]) if m.name.startswith(name))


def test_a_raised_threshold_is_not_better_for_having_fewer_nodes_over_it() -> None:
    a, b = run(), run(overThreshold=2, thresholds={"80": 10})
    over = row(a, b, "cpu nodes over")
    assert over.better is None
    assert over.verdict == (
        "not compared: the thresholds differ (A: 65% on 10 nodes; B: 80% on 10 nodes)"
    )


def test_under_the_same_thresholds_fewer_nodes_over_is_better() -> None:
    over = row(run(), run(overThreshold=2), "cpu nodes over")
    assert (over.better, over.verdict) == (1, "B: 3 nodes fewer")


def test_reports_without_recorded_thresholds_are_not_compared() -> None:
    over = row(run(thresholds=None), run(overThreshold=2, thresholds=None), "cpu nodes over")
    assert over.better is None and over.verdict.startswith("not compared")


@pytest.mark.parametrize(
    ("a", "b", "better", "verdict"),
    [
        (0.198, 0.200, None, "same (0.2 points, under 0.5 points)"),
        (0.200, 0.200, None, "same"),
        (0.10, 0.20, 0, "A: 10.0 points lower"),
        (0.30, 0.20, 1, "B: 10.0 points lower"),
    ],
)
def test_a_spread_difference_under_the_noise_rule_is_the_same(
    a: float, b: float, better: int | None, verdict: str
) -> None:
    spread = row(run(stddev=a), run(stddev=b), "cpu spread")
    assert (spread.better, spread.verdict) == (better, verdict)


def test_the_noise_rule_is_half_a_point() -> None:
    assert NOISE_POINTS == 0.5
    just = row(run(max=0.800), run(max=0.805), "cpu busiest")
    assert just.better == 0 and just.verdict == "A: 0.5 points lower"


def test_counts_name_the_side_and_the_difference() -> None:
    placed = row({**run(), "placed": 10}, {**run(), "placed": 12}, "pods placed")
    assert (placed.better, placed.verdict) == (1, "B: 2 pods more")
    unschedulable = row({**run(), "unschedulable": 2}, {**run(), "unschedulable": 5}, "pods un")
    assert (unschedulable.better, unschedulable.verdict) == (0, "A: 3 pods fewer")


def test_what_a_side_is_made_of_is_described_not_judged() -> None:
    mean = row(run(mean=0.3), run(mean=0.5), "cpu requested, mean")
    assert (mean.better, mean.verdict) == (None, "changed")
