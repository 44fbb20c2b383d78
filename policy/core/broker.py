"""Sending work to the Celery workers, and saying so plainly when the broker is down.

Jobs are rows (``SyncJob``, ``WhatIfRun``) committed before their message is sent, so a
broker outage loses nothing: the row stays queued and the beat's recovery sends it again
once the broker answers. The request that queued it gets :class:`BrokerUnavailable` at
once, which the API answers with a 503 naming the broker and the queued row (a client that
retries is handed the same row, not a duplicate) and pages with a 503 page saying the same.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from celery import current_app
from django.conf import settings
from django.db import transaction
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)


class BrokerUnavailable(Exception):
    """The task broker did not take a message; ``queued`` names the row that waits for it."""

    def __init__(self, queued: str, cause: Exception) -> None:
        self.broker = broker_address()
        self.queued = queued
        super().__init__(
            f"The task broker ({self.broker}) is unreachable: {type(cause).__name__}. "
            f"{queued} is saved and queued; it is sent to the workers as soon as the broker "
            "is back (no need to ask again)."
        )


def broker_address() -> str:
    """``scheme://host:port`` of the broker, without credentials or database."""
    url = urlsplit(str(settings.CELERY_BROKER_URL or ""))
    host = url.hostname or "?"
    return f"{url.scheme}://{host}:{url.port}" if url.port else f"{url.scheme}://{host}"


# The Celery tasks services enqueue, by name: services never import ``policy.tasks`` (the entry
# points above them); the app registers the tasks when it is ready (``policy.apps``).
PUSH_CLUSTER = "policy.tasks.push_cluster"
REFRESH_CLUSTER = "policy.tasks.refresh_cluster"
RUN_WHAT_IF = "policy.tasks.run_what_if"
EVALUATE_PENDING = "policy.tasks.evaluate_pending"
PREPARE_SNAPSHOT = "policy.tasks.prepare_snapshot"


def task_named(name: str) -> Any:
    """The registered Celery task ``name`` (KeyError names a task nobody registered)."""
    return current_app.tasks[name]


def send(task: str, args: tuple[Any, ...], queued: str) -> None:
    """Send task ``task(*args)``; :class:`BrokerUnavailable` if the broker cannot take it.

    Results are not kept: the row is the job's state, and asking the result backend on every
    send would make a backend outage fail the send too.
    """
    try:
        task_named(task).apply_async(args, ignore_result=True)
    except (OperationalError, OSError) as exc:
        logger.error("could not send %s: broker %s: %s", queued, broker_address(), exc)
        raise BrokerUnavailable(queued, exc) from exc


def send_after_commit(task: str, args: tuple[Any, ...], what: str) -> None:
    """Once the current transaction commits, send ``task(*args)`` for work that may be skipped:
    a broker that is down is logged (``what`` says what is not done), not raised."""
    transaction.on_commit(partial(_send_quietly, task, args, what))


def _send_quietly(task: str, args: tuple[Any, ...], what: str) -> None:
    """Runs after the commit, so nothing may escape: the change it follows is saved and its
    request must answer as such. No result is asked for (subscribing to the result backend
    raises the Redis client's own errors when Redis is down), and any failure to send, of
    whichever client, is logged."""
    try:
        task_named(task).apply_async(args, ignore_result=True)
    except Exception as exc:
        logger.warning("%s: broker %s: %s: %s", what, broker_address(), type(exc).__name__, exc)


def send_or_leave_queued(task: str, args: tuple[Any, ...], queued: str) -> None:
    """Send ``task(*args)`` for a job whose row is committed: a broker that is down leaves it
    queued for the beat's recovery to send, logged, instead of failing a request whose change
    is already saved."""
    try:
        send(task, args, queued)
    except BrokerUnavailable:
        logger.warning("%s stays queued until the broker is back", queued)


def prepare_views(cluster_id: int) -> None:
    """Once the current transaction commits, have a worker prepare the pages of the cluster's
    newest snapshot (``policy.web.prepared``): a new snapshot, or a change to what its pages
    show. Without a broker the task runs in this process; a broker that is down only leaves
    the pages to build their views themselves."""
    send_after_commit(
        PREPARE_SNAPSHOT, (cluster_id,), f"views of cluster {cluster_id} not prepared"
    )
