"""Who writes a decision's explanation after the answer (policy.decisions.deferred): the web
process's writer thread, or, when that process stopped first, a real Celery worker process
evaluating the stored inputs again. Needs PostgreSQL (both write with connections of their
own) and, for the worker, a broker."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from policy.clusters.services import load_demo_cluster
from policy.decisions import deferred, evaluation
from policy.decisions.models import PendingExplanation, PlacementDecision
from policy.tasks import complete_explanations
from tests.scoring.builders import make_container, make_pod
from tests.sync.worker import (  # noqa: F401 (fixtures)
    Worker,
    committed_db,
    wait_for,
    workers,
)


def pod(name: str) -> dict[str, Any]:
    return make_pod(name, containers=[make_container("app", {"cpu": "500m"})])


def written(pk: int) -> PlacementDecision | None:
    if PendingExplanation.objects.filter(decision_id=pk).exists():
        return None
    return PlacementDecision.objects.get(pk=pk)


def test_the_writer_thread_writes_it_once_the_process_is_idle(
    committed_db: None,  # noqa: F811
    settings: Any,
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the writer thread's own connection needs PostgreSQL's test database")
    settings.EXPLANATION_WRITER = deferred.BACKGROUND
    settings.EXPLANATION_WRITE_DELAY = 30
    cluster = load_demo_cluster(name="writer-thread", nodes=12).cluster
    row, made = evaluation.evaluate_and_record(cluster, pod("threaded"), defer=True)
    stored = wait_for(lambda: written(row.pk), 60, "the writer thread to write it")
    assert stored.explanation == made.to_dict()
    assert stored.explanation_base is not None


def test_a_worker_writes_what_a_stopped_web_process_left(
    committed_db: None,  # noqa: F811
    workers: Callable[[], Worker],  # noqa: F811
) -> None:
    cluster = load_demo_cluster(name="left-behind", nodes=12).cluster
    row, made = evaluation.evaluate_and_record(cluster, pod("orphan"), defer=True)
    expected = made.to_dict()
    PendingExplanation.objects.filter(decision=row).update(
        created=timezone.now() - deferred.STALE_AFTER - timedelta(seconds=1)
    )
    workers()
    assert complete_explanations.delay().get(timeout=120) == 1
    stored = written(row.pk)
    assert stored is not None and stored.explanation == expected
