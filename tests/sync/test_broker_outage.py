"""The broker is down: pushing, refreshing and what-if answer 503 in seconds naming the broker,
the job's row stays queued (asking again hands back the same row), and the beat's recovery
sends it once the broker is back."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from config.celery import app
from config.celery import app as celery_app
from policy.clusters.models import Cluster, ClusterSnapshot
from policy.clusters.services import load_demo_cluster
from policy.core.choices import PushMode
from policy.decisions.models import WhatIfRun
from policy.policies.models import NodeThresholdPolicy
from policy.sync import jobs
from policy.sync.models import SyncJob, SyncJobStatus

DOWN = "redis://127.0.0.1:1/0"  # nothing listens on port 1

pytestmark = pytest.mark.django_db(transaction=True)  # on-commit sends run as in production


@pytest.fixture
def broker_down(settings: Any) -> Iterator[None]:
    """Celery sends to a broker that refuses connections (a real connection attempt)."""
    conf = app.conf
    saved = conf.broker_url, conf.broker_write_url, conf.task_always_eager
    settings.CELERY_BROKER_URL = DOWN
    conf.broker_url, conf.broker_write_url, conf.task_always_eager = DOWN, DOWN, False
    fresh_pools()
    try:
        yield
    finally:
        conf.broker_url, conf.broker_write_url, conf.task_always_eager = saved
        fresh_pools()


def fresh_pools() -> None:
    """Celery keeps connection and producer pools per app: start new ones for the new URL."""
    app._pool = None
    app.amqp._producer_pool = None


@pytest.fixture
def snapshot(transactional_db: None) -> ClusterSnapshot:
    return load_demo_cluster(nodes=4)


def test_a_push_over_the_api_is_a_quick_503_and_its_job_waits_for_the_broker(
    broker_down: None, api_client: Any, operator: User, snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(operator)
    url = f"/api/v1/clusters/{snapshot.cluster_id}/sync/"
    response = api_client.post(url)
    # quick: publishing gives up after two retries instead of Celery's ~20 s of reconnecting
    assert celery_app.conf.task_publish_retry_policy["max_retries"] == 2
    assert response.status_code == 503 and response["Retry-After"] == "30"
    body = response.json()
    [job] = SyncJob.objects.all()
    assert body["broker"] == "redis://127.0.0.1:1"
    assert body["queued"] == f"Sync job {job.pk} (push)" and "is unreachable" in body["detail"]
    assert job.status == SyncJobStatus.QUEUED

    # Asking again names the same queued job, and says again that the broker is down: no
    # duplicate row, no "accepted" while nothing can reach a worker.
    again = api_client.post(url)
    assert again.status_code == 503 and again.json()["queued"] == body["queued"]
    assert SyncJob.objects.count() == 1

    # The broker is still down when the beat looks: nothing is lost, nothing fails.
    later = timezone.now() + timedelta(seconds=jobs.STALE_QUEUED_SECONDS + 1)
    sent: list[int] = []
    assert jobs.recover(later, send=lambda j: jobs._send(j)) == [job.pk]
    job.refresh_from_db()
    assert job.status == SyncJobStatus.QUEUED
    # Once it answers, the next recovery sends the job, once.
    assert jobs.recover(later + timedelta(seconds=jobs.STALE_QUEUED_SECONDS + 1), sent.append)
    assert sent == [job]


def test_a_refresh_page_is_a_503_page_like_the_api_every_time(
    broker_down: None, api_client: Any, client: Client, editor: User, snapshot: ClusterSnapshot
) -> None:
    client.force_login(editor)
    for _ in range(2):  # the second ask finds the job waiting: still not "requested"
        response = client.post(f"/clusters/{snapshot.cluster_id}/sync/refresh/")
        assert response.status_code == 503
        assert b"The workers cannot be reached right now" in response.content
        assert b"redis://127.0.0.1:1" in response.content
        assert b"requested" not in response.content
    [job] = SyncJob.objects.all()
    assert job.status == SyncJobStatus.QUEUED
    api_client.force_login(editor)
    answer = api_client.post(f"/api/v1/clusters/{snapshot.cluster_id}/refresh/")
    assert answer.status_code == 503 and answer.json()["queued"] == f"Sync job {job.pk} (refresh)"


def test_a_what_if_over_the_api_is_a_503_naming_the_queued_run(
    broker_down: None, api_client: Any, editor: User, snapshot: ClusterSnapshot
) -> None:
    api_client.force_login(editor)
    workload = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: w, namespace: default}\n"
        "spec: {containers: [{name: a, image: x}]}\n"
    )
    body = {
        "cluster": snapshot.cluster_id,
        "workload": workload,
        "baseline": {"source": "defaults"},
        "candidate": {"source": "defaults"},
    }
    response = api_client.post("/api/v1/what-if/", body, format="json")
    assert response.status_code == 503, response.content[:300]
    [run] = WhatIfRun.objects.all()
    assert response.json()["queued"] == f"What-if comparison {run.pk}"
    assert run.status == "queued"


def test_a_policy_write_commits_and_succeeds_with_its_push_left_queued(
    broker_down: None, api_client: Any, client: Client, editor: User, snapshot: ClusterSnapshot
) -> None:
    """A saved change never answers an error: the automatic push it causes, and the views it
    makes stale, wait for the broker instead (the API and the pages alike)."""
    Cluster.objects.filter(pk=snapshot.cluster_id).update(push_mode=PushMode.AUTOMATIC)
    node = next(o["metadata"]["name"] for o in snapshot.objects if o["kind"] == "Node")
    api_client.force_login(editor)
    body = {
        "cluster": snapshot.cluster_id,
        "name": "hot-nodes",
        "node_names": [node],
        "usage_thresholds": {"cpu": 50},
    }
    response = api_client.post("/api/v1/node-threshold-policies/", body, format="json")
    assert response.status_code == 201, response.content[:300]
    policy = NodeThresholdPolicy.objects.get()
    [job] = SyncJob.objects.all()
    assert (job.kind, job.status) == ("push", SyncJobStatus.QUEUED)

    client.force_login(editor)
    response = client.post(
        "/policies/thresholds/new/",
        {
            "parent": snapshot.cluster_id,
            "name": "cool-nodes",
            "enabled": "on",
            "priority": "10",
            "node_selector": "{}",
            "usage_thresholds-resource": ["cpu", ""],
            "usage_thresholds-value": ["40", ""],
        },
    )
    assert response.status_code == 302, response.content[:300]
    assert sorted(NodeThresholdPolicy.objects.values_list("name", flat=True)) == [
        "cool-nodes",
        policy.name,
    ]
    # The waiting push is reused: one job, still queued for the recovery to send.
    assert SyncJob.objects.get() == job
    later = timezone.now() + timedelta(seconds=jobs.STALE_QUEUED_SECONDS + 1)
    sent: list[SyncJob] = []
    assert jobs.recover(later, sent.append) == [job.pk] and sent == [job]
