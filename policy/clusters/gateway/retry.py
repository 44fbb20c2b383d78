"""Retrying Kubernetes API calls: which failures are worth another try, and how long to wait.

Transient failures (5xx, 429, timeouts, refused or reset connections) are retried with
exponential backoff, jittered so that many workers do not hammer a recovering API server in
step, capped per sleep and in total. Conflicts (409) are not retried here: the request was
built from a stale read, so repeating it would fail again; :func:`on_conflict` re-runs the
whole read-plan-write step instead. Everything else fails at once with the API's message.

Writes are safe to retry: every schedboard write carries a resourceVersion precondition (or is
a create), so a write that landed although its response was lost comes back as a 409, and the
re-plan then finds nothing left to do.
"""

from __future__ import annotations

import enum
import json
import logging
import random
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

import urllib3.exceptions

from policy.clusters.gateway.errors import (
    ConflictError,
    GatewayError,
    NotFoundError,
    PermanentError,
    ResourceVersionExpired,
    TransientError,
)
from policy.clusters.gateway.redact import redact

logger = logging.getLogger(__name__)

T = TypeVar("T")

TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


class Verdict(enum.Enum):
    TRANSIENT = "transient"
    CONFLICT = "conflict"
    GONE = "gone"
    NOT_FOUND = "not-found"
    PERMANENT = "permanent"


class HttpStatusError(Exception):
    """A non-2xx answer from the API server, before classification (internal)."""

    def __init__(self, status: int, body: bytes, headers: Mapping[str, str], what: str) -> None:
        super().__init__(f"{what}: HTTP {status}")
        self.status = status
        self.body = body
        self.headers = headers
        self.what = what

    def api_message(self) -> tuple[str, str]:
        """The API's ``Status`` message and reason, or the raw body when it sent no Status."""
        try:
            status = json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            status = None
        if isinstance(status, dict) and status.get("message"):
            return str(status["message"]), str(status.get("reason", ""))
        # Not an API server's answer (a proxy, a login page, whatever the URL points at): its
        # body is not echoed to the person connecting, who may not be meant to read it.
        kind = (self.headers or {}).get("Content-Type", "") or "no Content-Type"
        return (
            f"HTTP {self.status}; the answer is not a Kubernetes API Status ({kind}, "
            f"{len(self.body)} bytes, not shown): is the server URL an API server's?"
        ), ""

    def retry_after(self) -> float | None:
        """Seconds the server asked us to wait (``Retry-After``), if it said."""
        value = self.headers.get("Retry-After") if self.headers else None
        try:
            return float(value) if value is not None else None
        except ValueError:
            return None


def classify_status(status: int) -> Verdict:
    if status in TRANSIENT_STATUSES or status >= 500:
        return Verdict.TRANSIENT
    if status == 409:
        return Verdict.CONFLICT
    if status == 410:
        return Verdict.GONE
    if status == 404:
        return Verdict.NOT_FOUND
    return Verdict.PERMANENT


# Network-level failures worth retrying. SSL errors are not among them: a certificate
# problem does not fix itself (urllib3.SSLError is a HTTPError, so it is checked first).
_NETWORK_ERRORS = (
    urllib3.exceptions.HTTPError,
    ConnectionError,
    TimeoutError,
    socket.timeout,
)


def classify(exc: BaseException) -> Verdict:
    """What to do about an exception raised by one attempt."""
    if isinstance(exc, HttpStatusError):
        return classify_status(exc.status)
    if isinstance(exc, urllib3.exceptions.SSLError):
        return Verdict.PERMANENT
    if isinstance(exc, urllib3.exceptions.MaxRetryError) and exc.reason is not None:
        return classify(exc.reason)
    if isinstance(exc, _NETWORK_ERRORS):
        return Verdict.TRANSIENT
    return Verdict.PERMANENT


def translate(exc: BaseException, attempts: int = 1) -> GatewayError:
    """The :class:`GatewayError` for an attempt's exception, with the API's own message."""
    if isinstance(exc, GatewayError):
        return exc
    verdict = classify(exc)
    if not isinstance(exc, HttpStatusError):
        message = f"{type(exc).__name__}: {redact(exc)}"
        if verdict is Verdict.TRANSIENT:
            return TransientError(message, attempts=attempts)
        return PermanentError(message)
    api_message, reason = exc.api_message()
    message = f"{exc.what}: {api_message}"
    kinds: dict[Verdict, type[GatewayError]] = {
        Verdict.CONFLICT: ConflictError,
        Verdict.GONE: ResourceVersionExpired,
        Verdict.NOT_FOUND: NotFoundError,
        Verdict.PERMANENT: PermanentError,
    }
    if verdict is Verdict.TRANSIENT:
        return TransientError(message, status=exc.status, attempts=attempts)
    return kinds[verdict](message, status=exc.status, reason=reason)


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter: before retry ``n`` (0-based) wait a random time in
    ``[d/2, d]``, ``d = min(max_delay, base_delay * 2**n)``; give up after ``attempts`` tries
    or once ``deadline`` seconds have passed since the first."""

    attempts: int = 6
    base_delay: float = 0.25
    max_delay: float = 8.0
    deadline: float | None = 60.0
    random: Callable[[], float] = field(default=random.random, repr=False, compare=False)

    def delay(self, retry: int, server_hint: float | None = None) -> float:
        ceiling = min(self.max_delay, self.base_delay * 2**retry)
        wait = ceiling / 2 + self.random() * ceiling / 2
        if server_hint is not None:  # Retry-After, but never past our own cap
            wait = max(wait, min(server_hint, self.max_delay))
        return wait


DEFAULT_POLICY = RetryPolicy()


def call(
    attempt: Callable[[], T],
    policy: RetryPolicy = DEFAULT_POLICY,
    *,
    what: str = "request",
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> T:
    """``attempt()``, retried on transient failures; other failures raise at once, translated."""
    started = clock()
    for number in range(1, policy.attempts + 1):
        try:
            return attempt()
        except Exception as exc:
            if classify(exc) is not Verdict.TRANSIENT:
                raise translate(exc) from None
            hint = exc.retry_after() if isinstance(exc, HttpStatusError) else None
            wait = policy.delay(number - 1, hint)
            out_of_time = policy.deadline is not None and clock() + wait - started > policy.deadline
            if number == policy.attempts or out_of_time:
                error = translate(exc, attempts=number)
                raise TransientError(
                    f"{error.message} (gave up after {number} attempt(s))",
                    status=error.status,
                    attempts=number,
                ) from None
            logger.warning(
                "%s failed (%s), attempt %d of %d; retrying in %.2fs",
                what,
                translate(exc).message,
                number,
                policy.attempts,
                wait,
            )
            sleep(wait)
    raise AssertionError("unreachable: attempts must be >= 1")


def on_conflict(
    step: Callable[[], T],
    *,
    attempts: int = 8,
    what: str = "write",
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run ``step`` (read, plan, write) again while it raises :class:`ConflictError`.

    Each run re-reads the object, so a concurrent writer's change is kept and ours is
    re-applied on top. A short jittered pause lets a busy writer finish first.
    """
    for number in range(1, attempts + 1):
        try:
            return step()
        except ConflictError as exc:
            if number == attempts:
                raise ConflictError(
                    f"{exc.message} (still conflicting after {attempts} re-reads)",
                    status=exc.status,
                    reason=exc.reason,
                ) from None
            logger.info("%s conflicted (%s); re-reading and re-planning", what, exc.message)
            sleep(0.02 * number * (1 + random.random()))
    raise AssertionError("unreachable: attempts must be >= 1")
