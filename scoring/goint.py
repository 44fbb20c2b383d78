"""Go's integer arithmetic, which the upstream plugins and API types are written in.

Python ints never overflow and ``//`` floors; Go's int64 wraps around and ``/`` truncates toward
zero. Every place that reproduces an upstream computation or range check uses these, so the
rule lives once.
"""

from __future__ import annotations

import re

import numpy as np
import numpy.typing as npt

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # math.MinInt64, math.MaxInt64

IntArray = npt.NDArray[np.int64]


def fits_int64(value: int) -> bool:
    """Whether ``value`` is representable as a Go int64 (``strconv.ParseInt(…, 10, 64)``)."""
    return INT64_MIN <= value <= INT64_MAX


def int64_or_none(value: int) -> int | None:
    """``value`` when it fits an int64, else None (a parse that would fail upstream)."""
    return value if fits_int64(value) else None


def wrap_int64(value: int) -> int:
    """Two's-complement wrap, as Go's int64 arithmetic overflows."""
    return (value + 2**63) % 2**64 - 2**63


def quo(numerator: int, denominator: int) -> int:
    """Go's ``/`` on integers: the quotient truncated toward zero (Python's ``//`` floors)."""
    quotient = abs(numerator) // abs(denominator)
    return -quotient if (numerator < 0) != (denominator < 0) else quotient


def quo_array(numerator: IntArray, denominator: IntArray | int) -> IntArray:
    """:func:`quo` element-wise on int64 arrays."""
    quotient = np.abs(numerator) // np.abs(denominator)
    result: IntArray = np.where(
        (numerator < 0) ^ (np.asarray(denominator) < 0), -quotient, quotient
    )
    return result


_PARSE_INT = re.compile(r"[+-]?[0-9]+")


def parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: an optional sign and ASCII digits in int64 range;
    None where Go returns an error."""
    return int64_or_none(int(text)) if _PARSE_INT.fullmatch(text) else None
