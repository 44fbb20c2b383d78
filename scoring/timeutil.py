"""RFC 3339 timestamps as Kubernetes writes them (``metav1.Time``)."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache


def parse_time(text: str) -> datetime:
    """Parse an RFC 3339 time (``2026-11-22T10:00:00Z``, with optional fraction/offset) to UTC."""
    if not isinstance(text, str):
        raise ValueError(f"expected an RFC 3339 time string, got {text!r}")
    return _parse_text(text)


@lru_cache(maxsize=65536)
def _parse_text(text: str) -> datetime:
    """Memoized: a cluster's pods repeat a few thousand distinct stamps (a 5,000-node cluster's
    160,000 condition times hold 17,000), and datetimes are immutable."""
    value = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError(f"time {text!r} has no timezone (RFC 3339 requires one)")
    return value.astimezone(UTC)


def format_time(value: datetime) -> str:
    """Format as Kubernetes does: second precision, ``Z`` suffix."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now() -> datetime:
    return datetime.now(UTC)
