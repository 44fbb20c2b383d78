"""Errors shared across the engine, shaped like Kubernetes' ``field.Error``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Kubernetes' field.ErrorType strings (k8s.io/apimachinery/pkg/util/validation/field/errors.go).
NOT_FOUND = "FieldValueNotFound"
REQUIRED = "FieldValueRequired"
DUPLICATE = "FieldValueDuplicate"
INVALID = "FieldValueInvalid"
NOT_SUPPORTED = "FieldValueNotSupported"
FORBIDDEN = "FieldValueForbidden"
TOO_LONG = "FieldValueTooLong"
TOO_MANY = "FieldValueTooMany"
INTERNAL = "InternalError"
TYPE_INVALID = "FieldValueTypeInvalid"


@dataclass(frozen=True)
class FieldError:
    """One validation error: the v1 JSON field path, the Kubernetes error type and a message."""

    field: str
    type: str
    detail: str
    bad_value: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {"field": self.field, "type": self.type, "detail": self.detail}

    def __str__(self) -> str:
        return f"{self.field}: {self.type}: {self.detail}"


class InputError(Exception):
    """Bad input (unreadable file, invalid object, no profile for the pod): CLI exit code 2."""


class ConfigurationInvalid(InputError):
    """A configuration failed defaulting/validation; carries every error found."""

    def __init__(self, errors: list[FieldError]) -> None:
        self.errors = errors
        super().__init__("; ".join(str(e) for e in errors))
