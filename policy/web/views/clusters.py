"""The dashboard (a cluster's nodes under LoadAware) and the node page."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from policy.accounts.roles import can_edit_policy, role_required
from policy.clusters.models import Cluster
from policy.clusters.snapshot_chains import materialize
from policy.clusters.snapshots import summarize
from policy.core.choices import Role
from policy.core.params import parse_id
from policy.decisions import descheduling, stats
from policy.sync import status as sync_status
from policy.sync.thresholds_in_force import node_in_force, owned_nodes
from policy.web import trends
from policy.web.links import edit_links
from policy.web.pages import (
    LoadAwareSource,
    PageLoad,
    SnapshotUnreadable,
    load_for_page,
    loadaware_source,
    node_for_page,
    selected_cluster,
    stored_snapshot,
    trend_key,
)
from policy.web.presenters import activity
from policy.web.presenters import dashboard as board
from policy.web.presenters import descheduling as descheduling_presenter
from policy.web.presenters import trends as trend_ui
from policy.web.presenters.explain import loadaware_lines, metric_line
from scoring import ANNOTATION_USAGE_THRESHOLDS, InputError

DEFAULT_PAGE_SIZE = 50


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
    context |= {"snapshot": page_load.shown}
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
        "charts": activity.load_histograms(load, lambda band: _href(request, band=str(band))),
        "trends": _trends(cluster),
        "load_trends": _load_trends(cluster, source, page_load),
        "agreement": activity.agreement(
            stats.agreement_per_day(cluster, stats.first_day(activity.TREND_DAYS))
        ),
        "expiry": load.args.expiration_seconds,
        "descheduling": _descheduling_panel(cluster),
        "owned_annotations": owned_nodes(cluster),  # the others' annotations: set outside
    }
    template = (
        "policy/partials/node_table.html"
        if request.headers.get("X-Partial") == "nodes"
        else "policy/dashboard.html"
    )
    return render(request, template, context)


def _descheduling_panel(cluster: Cluster) -> descheduling_presenter.Panel:
    """LowNodeLoad's round (without re-placement, which the API answers) and the findings."""
    try:
        report = descheduling.lownodeload_report(cluster, place=False)
    except (descheduling.NoSnapshot, InputError) as exc:
        return descheduling_presenter.Panel(False, False, False, "", error=str(exc))
    configuration = report["configuration"]

    def fix_url(fix: str) -> tuple[str, str | None]:
        if fix == "loadaware" or fix == "nodemetric":
            links = edit_links(cluster)
            return ("policies", links[0][1]) if links else ("policies", None)
        if fix == "lownodeload" and configuration.get("id"):
            return (
                "LowNodeLoad editor",
                reverse("descheduler-lownodeload", args=[configuration["id"]]),
            )
        if fix == "koordlet":
            return ("slo-controller-config resource-threshold-config", None)
        return ("", None)

    return descheduling_presenter.panel(report, fix_url)


def _trends(cluster: Cluster) -> dict[str, Any]:
    history = list(
        cluster.snapshots.summaries()
        .order_by("-taken_at")
        .values("taken_at", "node_count", "pod_count", "pending_pod_count", "node_metric_count")[
            : activity.TREND_SNAPSHOTS
        ]
    )[::-1]
    start = stats.first_day(activity.TREND_DAYS)
    return {
        "snapshots": len(history),
        "series": activity.snapshot_series(history),
        **activity.decisions_per_day(start, stats.outcomes_per_day(cluster, start)),
    }


def _load_trends(cluster: Cluster, source: LoadAwareSource, page_load: PageLoad) -> dict[str, Any]:
    """Utilization and "filtered now" over the newest snapshots (their stored aggregates;
    the snapshot shown is recorded from the load in hand if it is not yet)."""
    points = trends.points(cluster, trend_key(source), shown=(page_load.shown, page_load.load))
    return {
        "points": points,
        "charts": trend_ui.cluster_charts(points, page_load.load.args.thresholds),
        "window": trends.WINDOW,
    }


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
        detail = node_for_page(stored, source, name)
    except SnapshotUnreadable as exc:
        raise Http404(f"The snapshot cannot be read: {exc}") from None
    if detail is None:
        raise Http404(f"Snapshot {stored.pk} of {cluster.name} has no node {name!r}.")
    latest = cluster.latest_snapshot()
    node_points = trends.node_points(cluster, name, trend_key(source))
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
        "in_force": node_in_force(cluster, stored, name),
        "in_force_annotation": ANNOTATION_USAGE_THRESHOLDS,
        "trend_points": node_points,
        "trend": trend_ui.node_chart(name, node_points),
        "recent_decisions": stats.recent_on_node(cluster, name),
    }
    return render(request, "policy/node.html", context)
