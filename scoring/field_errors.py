"""Constructors mirroring apimachinery's ``field.Invalid`` / ``Required`` / ... and path helpers.

Go builds field paths with ``field.NewPath("profiles").Index(0).Child("schedulerName")`` and prints
them as ``profiles[0].schedulerName``; :func:`child`, :func:`index` and :func:`key` build the same
strings. The ``detail`` of a :class:`~scoring.errors.FieldError` is Go's ``Detail``; where Go leaves
it empty (``field.Required(path, "")``, ``field.Duplicate``) the detail is what Go prints after the
field path instead (``Required value``, ``Duplicate value: "cpu"``), so it is never blank.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from scoring.errors import DUPLICATE, FORBIDDEN, INVALID, NOT_SUPPORTED, REQUIRED, FieldError


def child(path: str, *names: str) -> str:
    """``path.Child(name, ...)``."""
    for name in names:
        path = f"{path}.{name}" if path else name
    return path


def index(path: str, i: int) -> str:
    """``path.Index(i)``."""
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    """``path.Key(k)``."""
    return f"{path}[{k}]"


def go_value(value: Any) -> str:
    """A bad value as ``field.Error.ErrorBody`` renders it (quoted string, bare scalar, JSON)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        return str(value)
    try:
        return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    """``field.Invalid``."""
    return FieldError(path, INVALID, detail or f"Invalid value: {go_value(value)}", value)


def required(path: str, detail: str = "") -> FieldError:
    """``field.Required``."""
    return FieldError(path, REQUIRED, detail or "Required value", None)


def duplicate(path: str, value: Any) -> FieldError:
    """``field.Duplicate`` (Go has no detail; the bad value is the duplicated value)."""
    return FieldError(path, DUPLICATE, f"Duplicate value: {go_value(value)}", value)


def forbidden(path: str, detail: str) -> FieldError:
    """``field.Forbidden``."""
    return FieldError(path, FORBIDDEN, detail or "Forbidden", None)


def not_supported(path: str, value: Any, supported: Iterable[str]) -> FieldError:
    """``field.NotSupported``: the detail lists the supported values, quoted, in the given order."""
    values = list(supported)
    detail = "supported values: " + ", ".join(json.dumps(v) for v in values) if values else ""
    return FieldError(path, NOT_SUPPORTED, detail or f"Unsupported value: {go_value(value)}", value)
