"""/metrics: off without METRICS_TOKEN, a bearer token to read, and numbers from the
database (sync jobs and the clusters' schedulers against the engine)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from policy.clusters.models import ClusterSnapshot
from policy.decisions.models import PlacementDecision
from policy.sync.models import SyncJob

pytestmark = pytest.mark.django_db


def test_metrics_need_their_token(client: Client, settings: Any) -> None:
    settings.METRICS_TOKEN = None
    assert client.get("/metrics").status_code == 404
    settings.METRICS_TOKEN = "s3cret"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401


def test_metrics_count_jobs_and_agreement(
    client: Client, settings: Any, demo_snapshot: ClusterSnapshot
) -> None:
    settings.METRICS_TOKEN = "s3cret"
    cluster = demo_snapshot.cluster
    now = timezone.now()
    SyncJob.objects.create(
        cluster=cluster,
        kind="push",
        status="succeeded",
        started=now - timezone.timedelta(seconds=3),
        finished=now,
    )
    decision: dict[str, Any] = {
        "cluster": cluster,
        "snapshot_taken_at": now,
        "pod_namespace": "default",
        "pod_name": "p",
        "profile": "default-scheduler",
        "outcome": "scheduled",
        "source": "cluster",
        "feasible_nodes": 1,
        "total_nodes": 1,
        "pod": {},
    }
    PlacementDecision.objects.create(**decision, agreement="agrees")
    PlacementDecision.objects.create(**decision, agreement="disagrees")
    response = client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret", HTTP_HOST="10.0.0.9")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    labels = f'cluster="{cluster.name}",kind="push",status="succeeded"'
    assert f"schedboard_sync_jobs_total{{{labels}}} 1.0" in text
    assert f"schedboard_sync_job_seconds_total{{{labels}}} 3.0" in text
    where = f'cluster="{cluster.name}",profile="default-scheduler"'
    assert f'schedboard_scheduler_decisions{{agreement="agrees",{where}}} 1.0' in text
    assert f'schedboard_scheduler_decisions{{agreement="disagrees",{where}}} 1.0' in text
