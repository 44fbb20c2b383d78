"""Errors every service layer shares."""

from __future__ import annotations


class ServiceError(ValueError):
    """A request the data does not allow; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class ServiceUnavailable(Exception):
    """A service the request needs did not answer (an engine worker, say): the API answers
    503 with this message, pages a 503 page saying the same. Nothing was changed."""
