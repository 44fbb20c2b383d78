"""Classification of failures and the backoff schedule, without a server."""

from __future__ import annotations

import json

import pytest
import urllib3.exceptions

from policy.clusters.gateway import retry
from policy.clusters.gateway.errors import (
    ConflictError,
    NotFoundError,
    PermanentError,
    ResourceVersionExpired,
    TransientError,
)


def status_error(status: int, message: str = "boom") -> retry.HttpStatusError:
    body = json.dumps({"kind": "Status", "message": message, "reason": "X", "code": status})
    return retry.HttpStatusError(status, body.encode(), {}, "PUT /x")


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (500, TransientError),
        (502, TransientError),
        (503, TransientError),
        (504, TransientError),
        (429, TransientError),
        (409, ConflictError),
        (410, ResourceVersionExpired),
        (404, NotFoundError),
        (403, PermanentError),
        (422, PermanentError),
        (400, PermanentError),
        (401, PermanentError),
    ],
)
def test_status_classification(status: int, kind: type) -> None:
    error = retry.translate(status_error(status, "the API's words"))
    assert type(error) is kind
    assert error.status == status
    assert error.message == "PUT /x: the API's words"


@pytest.mark.parametrize(
    "exc",
    [
        urllib3.exceptions.NewConnectionError(None, "Connection refused"),  # type: ignore[arg-type]
        urllib3.exceptions.ReadTimeoutError(None, "/x", "Read timed out"),  # type: ignore[arg-type]
        urllib3.exceptions.ProtocolError("Connection aborted"),
        ConnectionResetError(),
        TimeoutError(),
    ],
)
def test_network_failures_are_transient(exc: Exception) -> None:
    assert retry.classify(exc) is retry.Verdict.TRANSIENT


def test_certificate_problems_are_permanent() -> None:
    assert retry.classify(urllib3.exceptions.SSLError("bad cert")) is retry.Verdict.PERMANENT


def test_non_status_bodies_are_described_not_quoted() -> None:
    """Whatever the URL points at may answer anything; only an API Status is quoted."""
    headers = {"Content-Type": "text/html"}
    error = retry.translate(retry.HttpStatusError(502, b"<html>secret</html>", headers, "GET /"))
    assert "secret" not in error.message
    assert error.message.startswith("GET /: HTTP 502; the answer is not a Kubernetes API Status")
    assert "text/html, 19 bytes" in error.message


def test_backoff_grows_exponentially_with_jitter_and_a_cap() -> None:
    low = retry.RetryPolicy(base_delay=0.5, max_delay=4, random=lambda: 0.0)
    high = retry.RetryPolicy(base_delay=0.5, max_delay=4, random=lambda: 0.999999)
    assert [low.delay(n) for n in range(6)] == [0.25, 0.5, 1, 2, 2, 2]
    assert [round(high.delay(n), 3) for n in range(6)] == [0.5, 1, 2, 4, 4, 4]
    assert high.delay(0, server_hint=30) == 4  # Retry-After, but capped


def test_call_retries_transient_then_succeeds() -> None:
    attempts: list[int] = []
    sleeps: list[float] = []

    def attempt() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise status_error(503)
        return "ok"

    policy = retry.RetryPolicy(attempts=5, base_delay=1, random=lambda: 0.0)
    assert retry.call(attempt, policy, sleep=sleeps.append) == "ok"
    assert len(attempts) == 3 and sleeps == [0.5, 1.0]


def test_call_gives_up_with_the_last_message() -> None:
    policy = retry.RetryPolicy(attempts=3, base_delay=0.01)

    def attempt() -> None:
        raise status_error(500, "etcd is sad")

    with pytest.raises(TransientError, match=r"etcd is sad \(gave up after 3 attempt") as info:
        retry.call(attempt, policy, sleep=lambda _: None)
    assert info.value.attempts == 3 and info.value.status == 500


def test_call_respects_the_deadline() -> None:
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    def attempt() -> None:
        raise status_error(500)

    policy = retry.RetryPolicy(attempts=100, base_delay=1, max_delay=1, deadline=3.5)
    with pytest.raises(TransientError) as info:
        retry.call(attempt, policy, sleep=sleep, clock=lambda: now[0])
    assert info.value.attempts < 10 and now[0] <= 3.5


@pytest.mark.parametrize("status", [403, 422, 409])
def test_call_does_not_retry_other_failures(status: int) -> None:
    calls: list[int] = []

    def attempt() -> None:
        calls.append(1)
        raise status_error(status)

    with pytest.raises((PermanentError, ConflictError)):
        retry.call(attempt, retry.RetryPolicy(attempts=5), sleep=lambda _: None)
    assert len(calls) == 1


def test_on_conflict_reruns_the_step() -> None:
    runs: list[int] = []

    def step() -> int:
        runs.append(1)
        if len(runs) < 3:
            raise ConflictError("changed", status=409)
        return len(runs)

    assert retry.on_conflict(step, sleep=lambda _: None) == 3


def test_on_conflict_gives_up() -> None:
    def step() -> None:
        raise ConflictError("changed", status=409)

    with pytest.raises(ConflictError, match="still conflicting after 4 re-reads"):
        retry.on_conflict(step, attempts=4, sleep=lambda _: None)
