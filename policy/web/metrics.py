"""``/metrics`` for Prometheus: what the sync jobs did and how the cluster's scheduler
compares with the engine, read from the database at each scrape.

Counting from the database (not in-process counters) gives the same numbers whichever web
process answers, and includes what the workers did.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterator

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db.models import Count, DurationField, ExpressionWrapper, F, Sum
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from policy.clusters.models import Cluster
from policy.core.choices import DecisionSource
from policy.decisions.models import PlacementDecision
from policy.sync.models import SyncJob


class SchedboardCollector(Collector):
    def collect(self) -> Iterator[Metric]:
        yield from _jobs()
        yield from _agreement()


def _jobs() -> Iterator[Metric]:
    jobs = CounterMetricFamily(
        "schedboard_sync_jobs",
        "Sync jobs by cluster, kind and status.",
        labels=["cluster", "kind", "status"],
    )
    seconds = CounterMetricFamily(
        "schedboard_sync_job_seconds",
        "Time finished sync jobs took, by cluster, kind and status.",
        labels=["cluster", "kind", "status"],
    )
    took = ExpressionWrapper(F("finished") - F("started"), output_field=DurationField())
    rows = (
        SyncJob.objects.values("cluster__name", "kind", "status")
        .annotate(count=Count("id"), took=Sum(took))
        .order_by()
    )
    for row in rows:
        labels = [row["cluster__name"], row["kind"], row["status"]]
        jobs.add_metric(labels, row["count"])
        seconds.add_metric(labels, row["took"].total_seconds() if row["took"] else 0.0)
    yield jobs
    yield seconds


def _agreement() -> Iterator[Metric]:
    decisions = GaugeMetricFamily(
        "schedboard_scheduler_decisions",
        "Bindings of the clusters' schedulers recorded, by cluster, profile and whether the "
        "engine agrees (kept for DECISION_RETENTION_DAYS).",
        labels=["cluster", "profile", "agreement"],
    )
    rows = (
        PlacementDecision.objects.filter(source=DecisionSource.CLUSTER)
        .values("cluster__name", "profile", "agreement")
        .annotate(count=Count("id"))
        .order_by()
    )
    for row in rows:
        decisions.add_metric([row["cluster__name"], row["profile"], row["agreement"]], row["count"])
    yield decisions
    clusters = GaugeMetricFamily("schedboard_clusters", "Clusters schedboard manages.")
    clusters.add_metric([], Cluster.objects.count())
    yield clusters


@login_not_required
@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus's text format, for a scraper that sends ``Authorization: Bearer
    <METRICS_TOKEN>``; without METRICS_TOKEN set, there is no /metrics (404)."""
    expected = settings.METRICS_TOKEN
    if not expected:  # a plain answer: this runs before the session and user exist
        return HttpResponse(
            "/metrics is off: set METRICS_TOKEN\n", status=404, content_type="text/plain"
        )
    given = request.headers.get("Authorization", "")
    if not hmac.compare_digest(given.encode(), f"Bearer {expected}".encode()):
        return HttpResponse("bearer token required\n", status=401, content_type="text/plain")
    registry = CollectorRegistry()
    registry.register(SchedboardCollector())
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
