"""Typed readers for settings taken from environment variables.

Each helper either returns a value of the right type or raises ``ImproperlyConfigured``
naming the variable and the rule it broke, so a typo in a deployment fails at start-up
instead of half-working. An empty variable counts as unset.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _raw(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def env_str(name: str, default: str | None = None) -> str | None:
    """The variable's text, or ``default`` when unset."""
    value = _raw(name)
    return default if value is None else value


_RATE = re.compile(r"[1-9][0-9]*/(s|sec|second|m|min|minute|h|hour|d|day)")


def env_rate(name: str, default: str) -> str:
    """A request rate as DRF reads it: ``N/second``, ``N/minute``, ``N/hour`` or ``N/day``."""
    value = _raw(name) or default
    if not _RATE.fullmatch(value):
        raise ImproperlyConfigured(
            f"{name}={value!r} is not a rate: write N/second, N/minute, N/hour or N/day"
        )
    return value


def env_bool(name: str, default: bool) -> bool:
    """``true/false``, ``1/0``, ``yes/no`` or ``on/off``, case-insensitive."""
    value = _raw(name)
    if value is None:
        return default
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={value!r} is not a boolean: use one of true/false, 1/0, yes/no, on/off"
    )


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    """A base-10 integer, at least ``minimum`` when given."""
    value = _raw(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} must be >= {minimum}")
    return number


def env_list(name: str, default: Iterable[str] = ()) -> list[str]:
    """Comma-separated values, blanks dropped: ``a.example, b.example``."""
    value = _raw(name)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def env_choice(name: str, choices: Sequence[str], default: str) -> str:
    """One of ``choices`` (matched case-insensitively, returned as spelled in ``choices``)."""
    value = _raw(name)
    if value is None:
        return default
    for choice in choices:
        if choice.lower() == value.lower():
            return choice
    raise ImproperlyConfigured(f"{name}={value!r} must be one of {', '.join(choices)}")


def env_url(name: str, schemes: Iterable[str], default: str | None = None) -> str | None:
    """A URL whose scheme is one of ``schemes`` (``postgres``, ``redis``...)."""
    value = env_str(name, default)
    if value is None:
        return None
    allowed = sorted(schemes)
    scheme = urlsplit(value).scheme
    if scheme not in allowed:
        raise ImproperlyConfigured(
            f"{name} must be a URL with scheme {', '.join(allowed)}; got scheme {scheme!r}"
        )
    return value


def env_secret(name: str) -> str | None:
    """A secret from ``NAME`` or from the file named by ``NAME_FILE`` (Docker/K8s secrets).

    Setting both is an error: which one wins would be a guess.
    """
    value = _raw(name)
    path = _raw(f"{name}_FILE")
    if value is not None and path is not None:
        raise ImproperlyConfigured(f"set {name} or {name}_FILE, not both")
    if path is None:
        return value
    try:
        secret = Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ImproperlyConfigured(f"{name}_FILE={path!r} cannot be read: {exc.strerror}") from None
    if not secret:
        raise ImproperlyConfigured(f"{name}_FILE={path!r} is empty")
    return secret
