"""Counts over the decision history the dashboard charts: outcomes and the engine's agreement
with the cluster's scheduler, per day."""

from __future__ import annotations

from datetime import date, timedelta

from django.db.models import Count
from django.db.models.functions import TruncDate
from django.utils import timezone

from policy.clusters.models import Cluster
from policy.core.choices import Agreement, DecisionSource
from policy.decisions.models import PlacementDecision


def first_day(days: int) -> date:
    """The first of the last ``days`` days, today included."""
    return (timezone.now() - timedelta(days=days - 1)).date()


def outcomes_per_day(cluster: Cluster, start: date) -> dict[date, dict[str, int]]:
    """Per day since ``start``, how many decisions had each outcome."""
    rows = (
        PlacementDecision.objects.filter(cluster=cluster, created__date__gte=start)
        .annotate(day=TruncDate("created"))
        .values("day", "outcome")
        .annotate(n=Count("id"))
        .order_by()
    )
    per_day: dict[date, dict[str, int]] = {}
    for row in rows:
        per_day.setdefault(row["day"], {})[row["outcome"]] = row["n"]
    return per_day


def agreement_per_day(cluster: Cluster, start: date) -> dict[str, dict[date, tuple[int, int]]]:
    """Per profile and day since ``start``, of the cluster scheduler's bindings: how many the
    engine agrees with, and how many there were."""
    rows = (
        PlacementDecision.objects.filter(
            cluster=cluster, source=DecisionSource.CLUSTER, created__date__gte=start
        )
        .annotate(day=TruncDate("created"))
        .values("profile", "day", "agreement")
        .annotate(n=Count("id"))
        .order_by()
    )
    counts: dict[str, dict[date, list[int]]] = {}
    for row in rows:
        day = counts.setdefault(row["profile"], {}).setdefault(row["day"], [0, 0])
        day[1] += row["n"]
        if row["agreement"] == Agreement.AGREES:
            day[0] += row["n"]
    return {
        profile: {day: (agree, total) for day, (agree, total) in days.items()}
        for profile, days in counts.items()
    }


def recent_on_node(cluster: Cluster, node: str, count: int = 10) -> list[PlacementDecision]:
    """The newest decisions that chose ``node`` (without their explanations)."""
    return list(
        PlacementDecision.objects.filter(cluster=cluster, selected_node=node).defer(
            "explanation_data", "pod"
        )[:count]
    )
