"""Sending work to the Celery workers, and saying so plainly when the broker is down.

Jobs are rows (``SyncJob``, ``WhatIfRun``) committed before their message is sent, so a
broker outage loses nothing: the row stays queued and the beat's recovery sends it again
once the broker answers. The request that queued it gets :class:`BrokerUnavailable` at
once, which the API answers with a 503 naming the broker and the queued row (a client that
retries is handed the same row, not a duplicate) and pages with a 503 page saying the same.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
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


def send(task: Any, args: tuple[Any, ...], queued: str) -> None:
    """Send ``task(*args)``; :class:`BrokerUnavailable` if the broker cannot take it.

    Results are not kept: the row is the job's state, and asking the result backend on every
    send would make a backend outage fail the send too.
    """
    try:
        task.apply_async(args, ignore_result=True)
    except (OperationalError, OSError) as exc:
        logger.error("could not send %s: broker %s: %s", queued, broker_address(), exc)
        raise BrokerUnavailable(queued, exc) from exc
