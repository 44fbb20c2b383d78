"""A real Celery worker process consumes a real task from the configured broker."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from django.conf import settings

from policy.tasks import ping
from tests.sync.worker import Worker, broker_traces, require_broker, wait_for


@pytest.fixture
def worker_queue() -> Iterator[str]:
    """Start ``celery -A config worker`` on a queue of its own; stop it afterwards."""
    require_broker()
    queue = f"schedboard-test-{uuid.uuid4().hex[:8]}"
    worker = Worker(queue, {**os.environ, "CELERY_BROKER_URL": str(settings.CELERY_BROKER_URL)})
    try:
        yield queue
    finally:
        print(worker.stop())  # pytest shows it only when the test fails


def test_worker_runs_a_real_task(worker_queue: str) -> None:
    assert settings.CELERY_TASK_ALWAYS_EAGER is False
    result = ping.apply_async(queue=worker_queue)
    assert result.get(timeout=60) == "pong"
    assert result.successful()
    result.forget()


def test_a_stopped_test_worker_leaves_nothing_in_the_broker() -> None:
    require_broker()
    queue = f"schedboard-test-{uuid.uuid4().hex[:8]}"
    worker = Worker(queue, {**os.environ, "CELERY_BROKER_URL": str(settings.CELERY_BROKER_URL)})
    assert ping.apply_async(queue=queue, ignore_result=True)
    wait_for(lambda: broker_traces(queue), 30, "the worker's bindings")  # it did leave some
    worker.stop()
    assert broker_traces(queue) == []
