"""Go's integer arithmetic: truncating division, int64 wrap-around and ParseInt."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.goint import INT64_MAX, INT64_MIN, parse_int64, quo, quo_array, wrap_int64

int64s = st.integers(INT64_MIN + 1, INT64_MAX)
nonzero = int64s.filter(bool)


@given(int64s, nonzero)
def test_quo_truncates_toward_zero(numerator: int, denominator: int) -> None:
    assert quo(numerator, denominator) == math.trunc(Fraction(numerator, denominator))


@given(st.lists(st.tuples(int64s, nonzero), min_size=1, max_size=20))
def test_quo_array_is_quo_per_element(pairs: list[tuple[int, int]]) -> None:
    numerators = np.array([n for n, _ in pairs], dtype=np.int64)
    denominators = np.array([d for _, d in pairs], dtype=np.int64)
    assert quo_array(numerators, denominators).tolist() == [quo(n, d) for n, d in pairs]


def test_wrap_int64_overflows_like_go() -> None:
    assert wrap_int64(INT64_MAX + 1) == INT64_MIN
    assert wrap_int64(INT64_MIN - 1) == INT64_MAX
    assert wrap_int64(-7) == -7


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("42", 42),
        ("+42", 42),
        ("-0", 0),
        ("007", 7),
        (str(INT64_MAX), INT64_MAX),
        (str(INT64_MIN), INT64_MIN),
        (str(INT64_MAX + 1), None),
        ("42\n", None),  # ParseInt takes no trailing newline (a `$` regex would)
        (" 42", None),
        ("4_2", None),
        ("٤٢", None),  # Arabic-Indic digits: Python's int() reads them, Go does not
        ("", None),
        ("1e3", None),
    ],
)
def test_parse_int64_is_strconv_parseint(text: str, value: int | None) -> None:
    assert parse_int64(text) == value
