"""RFC 3339 parsing: memoized, with the same answers and errors for every call."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from scoring.timeutil import parse_time


def test_repeated_stamps_parse_alike() -> None:
    first = parse_time("2026-11-22T19:08:27Z")
    assert first == datetime(2026, 11, 22, 19, 8, 27, tzinfo=UTC)
    assert parse_time("2026-11-22T19:08:27Z") == first
    assert parse_time("2026-11-22T20:08:27+01:00") == first


@pytest.mark.parametrize("bad", [{"not": "hashable"}, ["2026-11-22T19:08:27Z"], 1700000000, None])
def test_non_strings_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="RFC 3339 time string"):
        parse_time(bad)  # type: ignore[arg-type]


def test_a_bad_stamp_fails_every_time() -> None:
    for _ in range(2):
        with pytest.raises(ValueError, match="no timezone"):
            parse_time("2026-11-22T19:08:27")
