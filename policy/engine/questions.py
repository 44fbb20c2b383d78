"""The questions the engine tier answers, by name, and how a refusal travels back.

A question is a function from a JSON object to a JSON object, registered with
:func:`question` by the domain that owns it (decisions: ``evaluate``; pages: the dashboard's
load…). Questions and answers are JSON because they cross a process boundary: the asking
web process and the engine worker share no objects, only the database and the broker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Payload = dict[str, Any]
Handler = Callable[[Payload], Payload]

_handlers: dict[str, Handler] = {}


class Refused(Exception):
    """The engine cannot answer with these inputs: ``field`` names the input at fault.
    Raised by a question's handler, carried back to the asking process and raised there."""

    def __init__(self, field: str, message: str, errors: list[dict[str, Any]] | None = None):
        super().__init__(message)
        self.field = field
        self.errors = errors or []

    def to_json(self) -> Payload:
        return {"field": self.field, "message": str(self), "errors": self.errors}


def question(name: str) -> Callable[[Handler], Handler]:
    """Register the decorated function as the answer to question ``name``."""

    def register(handler: Handler) -> Handler:
        _handlers[name] = handler
        return handler

    return register


def handler_of(name: str) -> Handler:
    """The function answering ``name``; KeyError names a question nobody registered."""
    try:
        return _handlers[name]
    except KeyError:
        raise KeyError(f"no engine question {name!r} is registered") from None
