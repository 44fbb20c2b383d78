"""A real Celery worker process consumes a real task from the configured broker."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from policy.tasks import ping

ROOT = Path(__file__).resolve().parents[2]


def require_broker() -> None:
    """Skip without a broker, except in CI, where a missing broker is a failure."""
    if settings.CELERY_BROKER_URL:
        return
    if os.environ.get("CI") == "true":
        pytest.fail("CELERY_BROKER_URL is not set, but CI requires the worker test to run")
    pytest.skip("no CELERY_BROKER_URL: the worker test needs a broker (e.g. Redis)")


@pytest.fixture
def worker_queue() -> Iterator[str]:
    """Start ``celery -A config worker`` on a queue of its own; stop it afterwards."""
    require_broker()
    queue = f"schedboard-test-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "CELERY_BROKER_URL": str(settings.CELERY_BROKER_URL)}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "-c",
            "1",
            "-Q",
            queue,
            "-n",
            f"{queue}@%h",
            "--without-gossip",
            "--without-mingle",
            "--loglevel=INFO",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        yield queue
    finally:
        process.terminate()
        try:
            output, _ = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            output, _ = process.communicate()
        print(output)  # pytest shows it only when the test fails


def test_worker_runs_a_real_task(worker_queue: str) -> None:
    assert settings.CELERY_TASK_ALWAYS_EAGER is False
    result = ping.apply_async(queue=worker_queue)
    assert result.get(timeout=60) == "pong"
    assert result.successful()
