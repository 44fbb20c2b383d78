"""Numbers and times from query strings and form fields, read strictly.

``str.isdigit()`` accepts digits such as ``²`` that ``int()`` then refuses (a 500), and an id
of 30 digits passes it too and overflows the database's bigint (another 500). Everything
that reads an id, a version or a page size from a request goes through here instead.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from scoring import INT64_MAX

_DIGITS = re.compile(r"[0-9]{1,19}")
# A day's margin each side, so converting to any time zone stays within datetime's range.
_EARLIEST = datetime.min.replace(tzinfo=UTC) + timedelta(days=1)
_LATEST = datetime.max.replace(tzinfo=UTC) - timedelta(days=1)


def parse_count(text: str | None) -> int | None:
    """A non-negative integer written in ASCII digits that fits an int64; else None."""
    if not text or not _DIGITS.fullmatch(text):
        return None
    value = int(text)
    return value if value <= INT64_MAX else None


def parse_id(text: str | None) -> int | None:
    """A positive integer written in ASCII digits that fits a database id; else None."""
    value = parse_count(text)
    return value if value else None


def in_range(moment: datetime) -> bool:
    """Whether an aware ``moment`` can be shown in any time zone (years 1 to 9999)."""
    try:
        utc = moment.astimezone(UTC)
    except OverflowError:
        return False
    return _EARLIEST <= utc <= _LATEST
