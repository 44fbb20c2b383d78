"""Quantity parsing matches resource.ParseQuantity / Value() / MilliValue()."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.quantity import (
    QuantityError,
    format_amount,
    milli_value,
    parse_quantity,
    resource_amount,
    value,
)

BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1}
DECIMAL |= {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
MAX = 2**63 - 1


@pytest.mark.parametrize(
    ("text", "exact"),
    [
        ("1500m", Fraction(3, 2)),
        ("1Ki", 1024),
        ("0.5Gi", 2**29),
        ("1e3", 1000),
        ("1E3", 1000),
        ("1E", 10**18),
        ("2.5e-3", Fraction(1, 400)),
        (".5", Fraction(1, 2)),
        ("1.", 1),
        ("+7", 7),
        ("-250m", Fraction(-1, 4)),
        ("0.1n", Fraction(1, 10**9)),  # finer than nano rounds up to 1n
        ("1e-20", Fraction(1, 10**9)),
        ("100000000000000000000", MAX),  # capped at the int64 maximum
    ],
)
def test_parses_like_kubernetes(text: str, exact: Fraction | int) -> None:
    assert parse_quantity(text) == exact


@pytest.mark.parametrize("text", ["", "m", "Ki", "1KiB", "1 Gi", "1e", "abc", "1.2.3", "--1", "1i"])
def test_rejects_what_kubernetes_rejects(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_value_and_milli_value_round_up() -> None:
    assert value(parse_quantity("1500m")) == 2
    assert milli_value(parse_quantity("0.0001")) == 1
    assert milli_value(parse_quantity("-1.5m")) == -2  # away from zero, as ScaledValue
    assert resource_amount("cpu", "2") == 2000
    assert resource_amount("memory", "1Mi") == 1048576


@given(st.integers(min_value=0, max_value=10**6), st.sampled_from(sorted(BINARY)))
def test_binary_suffix_multiplies(number: int, suffix: str) -> None:
    expected = min(number * BINARY[suffix], MAX)
    assert parse_quantity(f"{number}{suffix}") == expected


@given(
    st.integers(min_value=0, max_value=10**9),
    st.integers(min_value=0, max_value=999),
    st.sampled_from(sorted(DECIMAL)),
)
def test_decimal_suffix_scales_exactly(whole: int, frac: int, suffix: str) -> None:
    text = f"{whole}.{frac:03d}{suffix}"
    exact = (whole + Fraction(frac, 1000)) * DECIMAL[suffix]
    nano = Fraction(1, 10**9)
    expected = min(-(-exact // nano) * nano, Fraction(MAX))  # ceil to nano, cap
    assert parse_quantity(text) == expected


@given(st.integers(min_value=-(10**12), max_value=10**12), st.integers(min_value=-12, max_value=6))
def test_exponent_scales_then_rounds_away_from_zero_to_nano(mantissa: int, exponent: int) -> None:
    exact = Fraction(mantissa) * Fraction(10) ** exponent
    nano = Fraction(1, 10**9)
    magnitude = min(-(-abs(exact) // nano) * nano, Fraction(MAX))
    assert parse_quantity(f"{mantissa}e{exponent}") == (magnitude if exact >= 0 else -magnitude)


@given(st.fractions(min_value=0, max_value=10**9, max_denominator=10**6))
def test_milli_value_is_the_ceiling(amount: Fraction) -> None:
    millis = milli_value(amount)
    assert millis - 1 < amount * 1000 <= millis


@given(st.integers(min_value=0, max_value=2**40))
def test_format_round_trips(amount: int) -> None:
    for name in ("cpu", "memory"):
        assert resource_amount(name, format_amount(name, amount)) == amount
