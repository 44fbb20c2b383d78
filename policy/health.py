"""Liveness and readiness checks (``/healthz``, ``/readyz``)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import DatabaseError, connection
from kombu.connection import Connection

logger = logging.getLogger(__name__)

OK = "ok"
EAGER = "eager"


def check_database() -> str:
    """``ok``, or ``error: ...`` when a trivial query fails."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        logger.warning("readiness: database unreachable: %s", exc)
        return f"error: {type(exc).__name__}"
    return OK


def check_broker() -> str:
    """``ok``; ``eager`` when no broker is configured (tasks run in-process); or ``error``."""
    url = settings.CELERY_BROKER_URL
    if not url:
        return EAGER
    timeout = settings.BROKER_CHECK_TIMEOUT
    try:
        with Connection(url, connect_timeout=timeout) as conn:
            conn.ensure_connection(
                max_retries=1, interval_start=0, interval_step=0, timeout=timeout
            )
    except Exception as exc:  # kombu raises transport-specific errors; any means "not ready"
        logger.warning("readiness: broker unreachable: %s", exc)
        return f"error: {type(exc).__name__}"
    return OK


def readiness() -> tuple[bool, dict[str, str]]:
    """(ready, {check: result}); ready when no check reports an error."""
    checks = {"database": check_database(), "broker": check_broker()}
    return all(not result.startswith("error") for result in checks.values()), checks
