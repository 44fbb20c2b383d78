"""The engine tier as deployed: a real engine worker process (``celery worker --pool=solo -Q
engine-0``) holds the cluster's state and answers the web process's evaluations; without one,
or once it died, a request gets a clear 503 naming the queue and nothing is recorded."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from policy.clusters import engine as held
from policy.clusters.services import load_demo_cluster
from policy.decisions.models import ExplanationBase, PlacementDecision
from policy.tasks import ping
from tests.personas import create_user
from tests.scoring.builders import make_container, make_pod
from tests.sync.worker import Worker, committed_db, require_broker  # noqa: F401 (fixture)


@pytest.fixture
def engine_worker(committed_db: None, settings: Any) -> Iterator[Callable[[], Worker]]:  # noqa: F811
    """Start engine workers (each call one more) serving shard 0 of a queue prefix of this
    test's own; the test process asks them instead of answering itself."""
    require_broker()
    if connection.vendor != "postgresql":
        pytest.skip("the engine worker tests need PostgreSQL (the worker opens the test database)")
    prefix = f"schedboard-engine-{uuid.uuid4().hex[:8]}-"
    settings.ENGINE_IN_PROCESS = False
    settings.ENGINE_QUEUE_PREFIX = prefix
    settings.ENGINE_TIMEOUT = 5
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.sync.worker_settings",
        "CELERY_BROKER_URL": str(settings.CELERY_BROKER_URL),
        "SCHEDBOARD_TEST_DATABASE": str(connection.settings_dict["NAME"]),
        "SCHEDBOARD_TEST_QUEUE": f"{prefix}regular",
        "ENGINE_QUEUE_PREFIX": prefix,
    }
    started: list[Worker] = []

    def start() -> Worker:
        worker = Worker(f"{prefix}0", env)
        started.append(worker)
        ping.apply_async(queue=f"{prefix}0").get(timeout=120)  # consuming the queue
        return worker

    try:
        yield start
    finally:
        for worker in started:
            print(worker.stop())  # pytest shows it only when the test fails


def evaluate(client: Any, cluster_id: int, name: str) -> Any:
    pod = make_pod(name, containers=[make_container("app", {"cpu": "100m"})])
    return client.post(f"/api/v1/clusters/{cluster_id}/evaluate/", {"pod": pod}, format="json")


def test_the_engine_worker_answers_evaluations_and_pages_and_the_web_holds_no_snapshot(
    engine_worker: Callable[[], Worker], api_client: Any
) -> None:
    stored = load_demo_cluster(nodes=12)
    api_client.force_login(create_user(f"viewer-{uuid.uuid4().hex[:6]}", "viewer"))
    held.clear_caches()
    engine_worker()
    answer = evaluate(api_client, stored.cluster_id, "web-1")
    assert answer.status_code == 201, answer.content
    body = answer.json()
    row = PlacementDecision.objects.get(pk=body["id"])
    assert row.selected_node == body["selectedNode"] and row.selected_node
    assert len(row.explanation["nodes"]) == 12  # whole when answered
    assert ExplanationBase.objects.filter(snapshot_id=stored.pk).count() == 1
    dashboard = api_client.get(f"/?cluster={stored.cluster_id}")
    assert dashboard.status_code == 200 and len(dashboard.context["summary"].rows) == 12
    node = api_client.get(f"/clusters/{stored.cluster_id}/nodes/{row.selected_node}/")
    assert node.status_code == 200 and node.context["detail"].name == row.selected_node
    assert api_client.get(f"/clusters/{stored.cluster_id}/nodes/no-such-node/").status_code == 404
    assert held._snapshots.values == {}  # the engine worker built it, not this process


def test_without_an_engine_worker_the_request_gets_a_503_naming_the_queue(
    engine_worker: Callable[[], Worker], api_client: Any
) -> None:
    stored = load_demo_cluster(nodes=12)
    api_client.force_login(create_user(f"viewer-{uuid.uuid4().hex[:6]}", "viewer"))
    answer = evaluate(api_client, stored.cluster_id, "web-1")
    assert answer.status_code == 503
    assert f"{settings.ENGINE_QUEUE_PREFIX}0" in answer.json()["detail"]
    assert not PlacementDecision.objects.filter(cluster=stored.cluster).exists()


def test_a_killed_engine_worker_fails_requests_cleanly_and_a_new_one_serves(
    engine_worker: Callable[[], Worker], api_client: Any
) -> None:
    stored = load_demo_cluster(nodes=12)
    api_client.force_login(create_user(f"viewer-{uuid.uuid4().hex[:6]}", "viewer"))
    first = engine_worker()
    assert evaluate(api_client, stored.cluster_id, "before").status_code == 201
    first.kill()
    lost = evaluate(api_client, stored.cluster_id, "meanwhile")
    assert lost.status_code == 503
    engine_worker()  # the replacement never answers the expired question
    after = evaluate(api_client, stored.cluster_id, "after")
    assert after.status_code == 201, after.content
    names = set(
        PlacementDecision.objects.filter(cluster=stored.cluster).values_list("pod_name", flat=True)
    )
    assert names == {"before", "after"}
