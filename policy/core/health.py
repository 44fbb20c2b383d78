"""Liveness and readiness checks (``/healthz``, ``/readyz``)."""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import DatabaseError, connection
from kombu.connection import Connection

logger = logging.getLogger(__name__)

OK = "ok"
EAGER = "eager"


def check_database() -> str:
    """``ok``, or ``error: ...`` when a trivial query fails or takes longer than
    ``DATABASE_CHECK_TIMEOUT`` (a hanging server must not hang the probe: orchestrators call
    it every few seconds and would pile up workers). The query runs on its own thread, with
    that thread's own connection; at most one such probe is in flight at a time."""
    if not _probe_slot.acquire(blocking=False):
        return "error: previous check still waiting"
    result: dict[str, str] = {}
    thread = threading.Thread(target=_probe, args=(result,), daemon=True, name="readyz-db")
    thread.start()
    thread.join(settings.DATABASE_CHECK_TIMEOUT)
    return result.get("database", "error: timeout")


_probe_slot = threading.Lock()


def _probe(result: dict[str, str]) -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        result["database"] = OK
    except DatabaseError as exc:
        logger.warning("readiness: database unreachable: %s", exc)
        result["database"] = f"error: {type(exc).__name__}"
    finally:
        connection.close()
        _probe_slot.release()


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
