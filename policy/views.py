"""Server-rendered pages and the health probes."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from policy import health
from policy.choices import ClusterKind, Role
from policy.models import Cluster
from policy.roles import role_required
from policy.snapshots import SORT_KEYS, sort_rows, summarize

NODE_TABLE_ROWS = 25


@role_required(Role.VIEWER)
@require_GET
def dashboard(request: HttpRequest) -> HttpResponse:
    """A cluster's newest snapshot: counts, NodeMetric freshness and the first nodes."""
    clusters = list(Cluster.objects.all())
    cluster = _selected_cluster(request, clusters)
    snapshot = cluster.latest_snapshot() if cluster else None
    context: dict[str, object] = {"clusters": clusters, "cluster": cluster, "snapshot": snapshot}
    if snapshot is not None:
        snapshot.refresh_from_db(fields=["objects"])
        summary = summarize(snapshot.objects, snapshot.taken_at)
        sort = request.GET.get("sort", "name")
        context |= {
            "summary": summary,
            "sort": sort,
            "sort_keys": SORT_KEYS,
            "rows": sort_rows(summary.rows, sort)[:NODE_TABLE_ROWS],
        }
    return render(request, "policy/dashboard.html", context)


def _selected_cluster(request: HttpRequest, clusters: list[Cluster]) -> Cluster | None:
    """``?cluster=<id>`` (404 if unknown), else the demo cluster, else the first one."""
    wanted = request.GET.get("cluster")
    if wanted:
        if not wanted.isdigit():
            raise Http404(f"No cluster with id {wanted!r}.")
        return get_object_or_404(Cluster, pk=int(wanted))
    demo = [cluster for cluster in clusters if cluster.kind == ClusterKind.DEMO]
    candidates = demo or clusters
    return candidates[0] if candidates else None


@login_not_required
@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness: the process answers. Checks nothing else, so a database outage does not
    get every pod restarted."""
    return JsonResponse({"status": "ok"})


@login_not_required
@never_cache
@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: the database answers and, when one is configured, the broker too."""
    ready, checks = health.readiness()
    return JsonResponse(
        {"status": "ok" if ready else "unavailable", "checks": checks},
        status=200 if ready else 503,
    )
