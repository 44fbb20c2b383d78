"""Errors every service layer shares."""

from __future__ import annotations


class ServiceError(ValueError):
    """A request the data does not allow; ``field`` names the input at fault."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
