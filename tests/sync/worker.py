"""A real ``celery -A config worker`` subprocess on the test database and its own queue."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings
from django.db import IntegrityError, connection, transaction

from config.celery import app

ROOT = Path(__file__).resolve().parents[2]


def forget_broker_traces(queue: str, node: str) -> None:
    """Delete what a test worker leaves in Redis: its queue, the queue's binding sets, and its
    remote-control (pidbox) binding; a shared Redis must not collect them run after run."""
    if not str(settings.CELERY_BROKER_URL or "").startswith(("redis://", "rediss://")):
        return
    client = redis.Redis.from_url(str(settings.CELERY_BROKER_URL))
    try:
        client.delete(queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
        for key in ("_kombu.binding.celery.pidbox", "_kombu.binding.reply.celery.pidbox"):
            for member in client.smembers(key):
                if member.decode().endswith(f"{node}.celery.pidbox"):
                    client.srem(key, member)
    finally:
        client.close()


def broker_traces(queue: str) -> list[str]:
    """Keys and binding-set members in Redis that mention ``queue``."""
    client = redis.Redis.from_url(str(settings.CELERY_BROKER_URL))
    try:
        found = [key.decode() for key in client.scan_iter(f"*{queue}*")]
        for key in client.scan_iter("_kombu.binding*", _type="set"):
            found += [m.decode() for m in client.smembers(key) if queue in m.decode()]
        return found
    finally:
        client.close()


def require_broker() -> None:
    """Skip without a broker, except in CI, where a missing broker is a failure."""
    if settings.CELERY_BROKER_URL:
        return
    if os.environ.get("CI") == "true":
        pytest.fail("CELERY_BROKER_URL is not set, but CI requires the worker test to run")
    pytest.skip("no CELERY_BROKER_URL: the worker test needs a broker (e.g. Redis)")


class Worker:
    """A worker process on its own queue; once stopped, it leaves nothing in the broker."""

    def __init__(self, queue: str, env: dict[str, str], also: tuple[str, ...] = ()) -> None:
        self.queue = queue
        self.also = also  # more queues it consumes (the engine shard's, say)
        self.node = f"{queue}-{uuid.uuid4().hex[:4]}@{socket.gethostname()}"
        self.process = subprocess.Popen(
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
                ",".join((queue, *also)),
                "-n",
                self.node,
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel=INFO",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def kill(self) -> None:
        """SIGKILL: no shutdown handler runs, nothing is acknowledged or cleaned up."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> str:
        """Stop the process (TERM, then KILL) and remove its traces from the broker; returns
        its output."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            output, _ = self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            output, _ = self.process.communicate()
        for queue in (self.queue, *self.also):
            forget_broker_traces(queue, self.node)
        return output or ""


def _restore_initial_data() -> None:
    """Put back what the migrations created (content types, role groups) with their original
    ids, if a transactional test's flush removed it: pytest-django runs tests without a
    ``django_db`` mark last, after those flushes."""
    from django.contrib.auth.models import Group
    from django.contrib.contenttypes.models import ContentType
    from django.core import serializers

    original = getattr(connection, "_test_serialized_contents", None)
    if original and not (ContentType.objects.exists() and Group.objects.exists()):
        for item in serializers.deserialize("json", original):
            try:
                with transaction.atomic():
                    item.save()
            except IntegrityError:  # already there (perhaps recreated under another id)
                pass
    ContentType.objects.clear_cache()


@pytest.fixture
def committed_db(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """The test database in autocommit, so a worker process sees what the test writes.

    Not ``transactional_db``: its flush afterwards would drop the data migrations' rows
    (role groups, content types) other tests rely on. What the test created is deleted
    instead: clusters (with everything that hangs off them), users and change-log rows.
    """
    from django.contrib.auth.models import User

    from policy.accounts.models import AuthorizationFailure, PolicyChange
    from policy.clusters.models import Cluster

    def newest(model: Any) -> int:
        return int(model.objects.order_by("-pk").values_list("pk", flat=True).first() or 0)

    with django_db_blocker.unblock():
        _restore_initial_data()
        marks = {
            model: newest(model) for model in (Cluster, User, PolicyChange, AuthorizationFailure)
        }
        try:
            yield
        finally:
            for model in (PolicyChange, AuthorizationFailure, Cluster, User):
                model.objects.filter(pk__gt=marks[model]).delete()


@pytest.fixture
def workers(committed_db: None, settings: Any) -> Iterator[Callable[[], Worker]]:
    """Start workers (each call one more) consuming a queue of this test; tasks sent by the
    test process go to that queue too. Needs PostgreSQL (the worker shares the test
    database) and a broker."""
    require_broker()
    if connection.vendor != "postgresql":
        pytest.skip("the worker tests need PostgreSQL (the worker opens the test database)")
    queue = f"schedboard-sync-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.sync.worker_settings",
        "CELERY_BROKER_URL": str(settings.CELERY_BROKER_URL),
        "SCHEDBOARD_TEST_DATABASE": str(connection.settings_dict["NAME"]),
        "SCHEDBOARD_TEST_QUEUE": queue,
        # The engine shard's tasks (pending pods, a snapshot's views) go to a queue of the
        # test's own, which the same worker consumes.
        "ENGINE_QUEUE_PREFIX": f"{queue}-engine-",
    }
    previous = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    settings.ENGINE_QUEUE_PREFIX = f"{queue}-engine-"
    started: list[Worker] = []

    def start() -> Worker:
        worker = Worker(queue, env, also=(f"{queue}-engine-0",))
        started.append(worker)
        return worker

    try:
        yield start
    finally:
        app.conf.task_default_queue = previous
        for worker in started:
            print(worker.stop())  # pytest shows it only when the test fails


def wait_for(check: Callable[[], Any], timeout: float = 60, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
