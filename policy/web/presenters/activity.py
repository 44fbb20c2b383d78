"""The dashboard's activity charts: load histograms of the newest snapshot, counts over the
newest snapshots, decisions per day and the engine's agreement with the cluster's scheduler.
Pure: the views hand in rows and counts (``policy.decisions.stats``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import date, timedelta
from typing import Any

from policy.core.choices import DecisionOutcome
from policy.web.presenters import charts
from policy.web.presenters import dashboard as board

TREND_SNAPSHOTS = 30
TREND_DAYS = 14
SNAPSHOT_COUNTS = (
    ("node_count", "Nodes"),
    ("pod_count", "Pods bound"),
    ("pending_pod_count", "Pods pending"),
    ("node_metric_count", "NodeMetrics"),
)


def load_histograms(load: Any, band_href: Callable[[board.Band], str]) -> list[dict[str, Any]]:
    """Per resource, the nodes' load in bands (each band links to its nodes) with the
    threshold's band marked."""
    out = []
    for resource in ("cpu", "memory"):
        bins, unmeasured = board.histogram(load.rows, resource, band_href)
        threshold = load.args.thresholds.get(resource, 0)
        over = load.over(resource)
        label = (
            f"{resource} load of {load.nodes - unmeasured} nodes in {board.BAND_WIDTH}% bands; "
            f"{over} above their threshold"
        )
        out.append(
            {
                "resource": resource,
                "over": over,
                "unmeasured": unmeasured,
                "threshold": threshold,
                "svg": charts.histogram(
                    bins, label=label, marked=board.band_index(threshold) if threshold else None
                ),
            }
        )
    return out


def snapshot_series(history: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Sparklines of the snapshots' counts, oldest first (none for a single snapshot)."""
    if len(history) < 2:
        return []
    series = []
    for key, label in SNAPSHOT_COUNTS:
        values = [int(row[key]) for row in history]
        series.append(
            {
                "label": label,
                "first": values[0],
                "last": values[-1],
                "svg": charts.sparkline(
                    values,
                    label=f"{label} over the last {len(values)} snapshots: "
                    f"{values[0]} to {values[-1]}",
                ),
            }
        )
    return series


def decisions_per_day(start: date, per_day: Mapping[date, Mapping[str, int]]) -> dict[str, Any]:
    """Stacked columns of the decisions per day and outcome, ``TREND_DAYS`` days from ``start``."""
    days = [start + timedelta(days=k) for k in range(TREND_DAYS)]
    total = sum(sum(v.values()) for v in per_day.values())
    svg = charts.stacked_columns(
        [
            charts.Stack(
                day.strftime("%m-%d"),
                [
                    (outcome, per_day.get(day, {}).get(outcome, 0))
                    for outcome in DecisionOutcome.values
                ],
            )
            for day in days
        ],
        label=f"Decisions per day over the last {TREND_DAYS} days: {total} in all",
    )
    return {"decisions": svg, "total": total}


def agreement(counts: Mapping[str, Mapping[date, tuple[int, int]]]) -> list[dict[str, Any]]:
    """Per profile, how often the engine agreed with the cluster's scheduler: the rate, and
    the daily rate as a sparkline."""
    profiles = []
    for profile, days in sorted(counts.items()):
        agree, total = sum(d[0] for d in days.values()), sum(d[1] for d in days.values())
        daily = [round(100 * a / n) for a, n in (days[d] for d in sorted(days))]
        profiles.append(
            {
                "profile": profile,
                "agree": agree,
                "total": total,
                "rate": round(100 * agree / total),
                "svg": charts.sparkline(
                    daily, label=f"{profile}: share of bindings the engine agrees with, per day"
                )
                if len(daily) > 1
                else "",
            }
        )
    return profiles
