"""The dashboard (a cluster's nodes under LoadAware) and the node page."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.paginator import Paginator
from django.db.models import Count
from django.db.models.functions import TruncDate
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.http import require_GET

from policy.accounts.roles import can_edit_policy, role_required
from policy.clusters.models import Cluster
from policy.clusters.snapshot_chains import materialize
from policy.clusters.snapshots import summarize
from policy.core.choices import Agreement, DecisionOutcome, DecisionSource, Role
from policy.core.params import parse_id
from policy.decisions.models import PlacementDecision
from policy.policies import rendering
from policy.sync import status as sync_status
from policy.web.links import edit_links
from policy.web.pages import (
    SnapshotUnreadable,
    engine_snapshot_or_notice,
    load_for_page,
    loadaware_source,
    selected_cluster,
    stored_snapshot,
)
from policy.web.presenters import charts
from policy.web.presenters import dashboard as board
from policy.web.presenters.explain import loadaware_lines, metric_line
from policy.web.presenters.node import node_detail as present_node

DEFAULT_PAGE_SIZE = 50
TREND_SNAPSHOTS = 30
TREND_DAYS = 14


def _page_size(request: HttpRequest) -> int:
    wanted = parse_id(request.GET.get("per_page"))
    return wanted if wanted in board.PAGE_SIZES else DEFAULT_PAGE_SIZE


def _href(request: HttpRequest, **changes: str | None) -> str:
    """This page's query string with ``changes`` (None removes a key); page resets."""
    params = request.GET.copy()
    params.pop("page", None)
    for key, value in changes.items():
        if value is None:
            params.pop(key, None)
        else:
            params[key] = value
    return f"?{params.urlencode()}" if params else "?"


@role_required(Role.VIEWER)
@require_GET
def dashboard(request: HttpRequest) -> HttpResponse:
    """A cluster's newest snapshot as LoadAwareScheduling sees it: every node's utilization
    against its effective threshold, NodeMetric freshness, what would be filtered and why."""
    clusters = list(Cluster.objects.all())
    cluster = selected_cluster(request, clusters)
    stored = cluster.latest_snapshot() if cluster else None
    context: dict[str, Any] = {
        "clusters": clusters,
        "cluster": cluster,
        "snapshot": stored,
        "can_edit": can_edit_policy(request.user),
        "edit_links": edit_links(cluster) if cluster and can_edit_policy(request.user) else [],
        "sync": sync_status.cluster_status(cluster) if cluster else None,
    }
    if cluster is None or stored is None:
        return render(request, "policy/dashboard.html", context)
    source = loadaware_source(cluster, request.GET.get("profile") or None)
    try:
        page_load = load_for_page(stored, source)
    except SnapshotUnreadable as exc:
        context |= {"summary": summarize(materialize(stored)), "unreadable": str(exc)}
        return render(request, "policy/dashboard.html", context)

    load = page_load.load
    context |= {"snapshot": page_load.shown, "preparing": page_load.preparing}
    if request.headers.get("X-Partial") == "status":  # the "being prepared" notice polls
        return render(request, "policy/partials/preparing.html", context)
    query = board.NodeQuery.from_params(request.GET)
    selected = board.select(load.rows, query)
    paginator = Paginator(selected, _page_size(request))
    page = paginator.get_page(request.GET.get("page"))
    context |= {
        "summary": load,
        "source": source,
        "query": query,
        "sort": query.sort,
        "sort_keys": board.SORT_KEYS,
        "page_obj": page,
        "rows": list(page.object_list),
        "matching": len(selected),
        "states": [
            (key, label, count)
            for (key, label), count in zip(
                board.STATES.items(), board.state_counts(load.rows).values(), strict=True
            )
        ],
        "facets": board.facets(load.rows),
        "page_sizes": board.PAGE_SIZES,
        "per_page": paginator.per_page,
        "reasons": [
            (reason, count, _href(request, reason=reason, state=None))
            for reason, count in load.reasons()
        ],
        "charts": _charts(request, load),
        "trends": _trends(cluster),
        "agreement": _agreement(cluster),
        "expiry": load.args.expiration_seconds,
    }
    template = (
        "policy/partials/node_table.html"
        if request.headers.get("X-Partial") == "nodes"
        else "policy/dashboard.html"
    )
    return render(request, template, context)


def _charts(request: HttpRequest, load: Any) -> list[dict[str, Any]]:
    out = []
    for resource in ("cpu", "memory"):
        bins, unmeasured = board.histogram(
            load.rows, resource, lambda band: _href(request, band=str(band))
        )
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
                    bins,
                    label=label,
                    marked=board.band_index(threshold) if threshold else None,
                ),
            }
        )
    return out


def _trends(cluster: Cluster) -> dict[str, Any]:
    history: list[Any] = list(
        cluster.snapshots.summaries()
        .order_by("-taken_at")
        .values("taken_at", "node_count", "pod_count", "pending_pod_count", "node_metric_count")[
            :TREND_SNAPSHOTS
        ]
    )[::-1]
    series = []
    if len(history) > 1:
        for key, label in (
            ("node_count", "Nodes"),
            ("pod_count", "Pods bound"),
            ("pending_pod_count", "Pods pending"),
            ("node_metric_count", "NodeMetrics"),
        ):
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
    since = timezone.now() - timedelta(days=TREND_DAYS - 1)
    start = since.date()
    rows = (
        PlacementDecision.objects.filter(cluster=cluster, created__date__gte=start)
        .annotate(day=TruncDate("created"))
        .values("day", "outcome")
        .annotate(n=Count("id"))
    )
    per_day: dict[Any, dict[str, int]] = {}
    for row in rows:
        per_day.setdefault(row["day"], {})[row["outcome"]] = row["n"]
    days = [start + timedelta(days=k) for k in range(TREND_DAYS)]
    total = sum(sum(v.values()) for v in per_day.values())
    decisions = charts.stacked_columns(
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
    return {"snapshots": len(history), "series": series, "decisions": decisions, "total": total}


def _agreement(cluster: Cluster) -> list[dict[str, Any]]:
    """Per profile, how often the engine agreed with the cluster's scheduler over the last
    TREND_DAYS days: the rate, and the daily rate as a sparkline."""
    start = (timezone.now() - timedelta(days=TREND_DAYS - 1)).date()
    rows = (
        PlacementDecision.objects.filter(
            cluster=cluster, source=DecisionSource.CLUSTER, created__date__gte=start
        )
        .annotate(day=TruncDate("created"))
        .values("profile", "day", "agreement")
        .annotate(n=Count("id"))
        .order_by()
    )
    counts: dict[str, dict[Any, list[int]]] = {}
    for row in rows:
        day = counts.setdefault(row["profile"], {}).setdefault(row["day"], [0, 0])
        day[1] += row["n"]
        if row["agreement"] == Agreement.AGREES:
            day[0] += row["n"]
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


def _threshold_policy(cluster: Cluster, stored: Any, name: str) -> Any:
    """Which node threshold policy gives this node its annotation now (and which others
    target it), as a push would write it."""
    _, _, rows = rendering.render_node_thresholds(cluster, stored=stored)
    return next((row for row in rows if row.node == name), None)


def _node_preparing(
    request: HttpRequest,
    cluster: Cluster,
    stored: Any,
    name: str,
    preparing: bool,
    partial: bool,
) -> HttpResponse:
    """The node page while its snapshot is prepared: a notice polling until it is ready."""
    context = {"cluster": cluster, "snapshot": stored, "name": name, "preparing": preparing}
    template = "partials/node_preparing.html" if partial else "node_preparing.html"
    return render(request, f"policy/{template}", context)


@role_required(Role.VIEWER)
@require_GET
def node_detail(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    """One node of a snapshot (the newest, or ``?snapshot=``)."""
    cluster = get_object_or_404(Cluster, pk=pk)
    stored = stored_snapshot(cluster, request.GET.get("snapshot"))
    if stored is None:
        raise Http404(f"Cluster {cluster.name} has no snapshot yet.")
    source = loadaware_source(cluster, request.GET.get("profile") or None)
    try:
        snapshot = engine_snapshot_or_notice(stored)
    except SnapshotUnreadable as exc:
        raise Http404(f"The snapshot cannot be read: {exc}") from None
    partial = request.headers.get("X-Partial") == "status"  # the notice polls
    if snapshot is None or partial:
        return _node_preparing(request, cluster, stored, name, snapshot is None, partial)
    detail = present_node(snapshot, source.plugin, stored.taken_at, name)
    if detail is None:
        raise Http404(f"Snapshot {stored.pk} of {cluster.name} has no node {name!r}.")
    latest = cluster.latest_snapshot()
    context = {
        "cluster": cluster,
        "snapshot": stored,
        "latest": latest,
        "source": source,
        "detail": detail,
        "la": detail.loadaware,
        "la_lines": loadaware_lines(detail.loadaware),
        "metric": metric_line(detail.loadaware.get("nodeMetric")),
        "can_edit": can_edit_policy(request.user),
        "edit_links": edit_links(cluster) if can_edit_policy(request.user) else [],
        "threshold_policy": _threshold_policy(cluster, stored, name),
        "recent_decisions": PlacementDecision.objects.filter(
            cluster=cluster, selected_node=name
        ).defer("explanation_data", "pod")[:10],
    }
    return render(request, "policy/node.html", context)
