"""Answering questions where the engine state is held (an engine worker, or this process on
the embedded default)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from policy.engine.questions import Payload, Refused, handler_of

_serving: ContextVar[bool] = ContextVar("engine_serving", default=False)


def serving() -> bool:
    """True while this process runs an engine task: questions asked meanwhile (by a handler,
    or by pending-pod evaluation after a refresh) are answered here, not sent to a queue."""
    return _serving.get()


@contextmanager
def engine_task() -> Iterator[None]:
    token = _serving.set(True)
    try:
        yield
    finally:
        _serving.reset(token)


def answer(name: str, payload: Payload) -> Payload:
    """``{"answer": …}``, or ``{"refused": …}`` when the handler refused the inputs."""
    with engine_task():
        try:
            result: Payload = {"answer": handler_of(name)(payload)}
        except Refused as exc:
            result = {"refused": exc.to_json()}
    return result
