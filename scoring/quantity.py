"""Kubernetes ``resource.Quantity`` parsing, exact to the integer.

Follows k8s.io/apimachinery/pkg/api/resource/quantity.go (``ParseQuantity``): a signed decimal
number, then one suffix — binary SI (Ki … Ei), decimal SI (n, u, m, "", k, M, G, T, P, E) or a
decimal exponent (``e3``, ``E-2``). Values finer than one nano are rounded up (away from zero),
magnitudes above 2^63-1 are capped, and ``Value()`` / ``MilliValue()`` round up to the next
integer, as ``ScaledValue`` does. Exact rational arithmetic (``Fraction``) avoids float drift.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache
from typing import Any

from scoring.goint import INT64_MAX

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_NUMBER = re.compile(r"^([+-]?)(\d*)(?:\.(\d*))?(.*)$")
_EXPONENT = re.compile(r"^[eE]([+-]?\d+)$")
_MAX = Fraction(INT64_MAX)
_NANO = Fraction(1, 10**9)


class QuantityError(ValueError):
    """A string that ``resource.ParseQuantity`` would reject."""


def _ceil_away(value: Fraction) -> int:
    """Round to an integer away from zero (inf.RoundUp / ScaledValue semantics)."""
    return math.ceil(value) if value >= 0 else -math.ceil(-value)


def _suffix_scale(suffix: str, text: str) -> Fraction:
    if suffix in _BINARY:
        return Fraction(2 ** _BINARY[suffix])
    if suffix in _DECIMAL:
        return Fraction(10) ** _DECIMAL[suffix]
    exponent = _EXPONENT.match(suffix)
    if exponent is None:
        raise QuantityError(f"quantities must match the regular expression: {text!r}")
    return Fraction(10) ** int(exponent.group(1))


def parse_quantity(text: str | int | float) -> Fraction:
    """Parse a quantity to its exact value (e.g. ``"1500m"`` → 3/2, ``"1Ki"`` → 1024).

    JSON numbers are accepted too, as Kubernetes' JSON decoding of a Quantity does.
    """
    if isinstance(text, bool):
        raise QuantityError(f"quantities must be strings or numbers, got {text!r}")
    if isinstance(text, int):
        return min(Fraction(text), _MAX) if text >= 0 else max(Fraction(text), -_MAX)
    if isinstance(text, float):
        text = repr(text)
    if not isinstance(text, str) or not text:
        raise QuantityError(f"quantities must match the regular expression: {text!r}")
    match = _NUMBER.match(text)
    if match is None:  # pragma: no cover - the pattern matches every string
        raise QuantityError(f"quantities must match the regular expression: {text!r}")
    sign, whole, frac, suffix = match.groups()
    if not whole and not frac:
        # Go's parser reads a bare suffix ("m") as zero, but the API's OpenAPI pattern
        # (which kubectl and admission apply first) demands a digit: reject it.
        raise QuantityError(f"quantities must match the regular expression: {text!r}")
    mantissa = Fraction(int(whole or "0")) + (
        Fraction(int(frac), 10 ** len(frac)) if frac else Fraction(0)
    )
    magnitude = mantissa * _suffix_scale(suffix, text)
    if magnitude != 0:
        magnitude = math.ceil(magnitude / _NANO) * _NANO
    magnitude = min(magnitude, _MAX)
    return -magnitude if sign == "-" else magnitude


NANO = 10**9


@lru_cache(maxsize=65536)
def _nanos_of_text(text: str) -> int:
    exact = parse_quantity(text) * NANO
    assert exact.denominator == 1  # parse_quantity rounds to whole nanos
    return int(exact)


def parse_nanos(text: str | int | float) -> int:
    """A quantity as an exact integer count of nano-units (``"1500m"`` → 1_500_000_000).

    Kubernetes rounds every quantity to nano precision, so integers lose nothing and sum far
    faster than fractions; parsed strings are cached since clusters repeat a few values.
    """
    if isinstance(text, str):
        return _nanos_of_text(text)
    exact = parse_quantity(text) * NANO
    return int(exact)


def _ceil_div_away(numerator: int, divisor: int) -> int:
    quotient = -(-abs(numerator) // divisor)
    return quotient if numerator >= 0 else -quotient


def nanos_value(nanos: int) -> int:
    """``Value()`` of a nano-unit amount: whole units rounded up (away from zero)."""
    return _ceil_div_away(nanos, NANO)


def nanos_milli_value(nanos: int) -> int:
    """``MilliValue()`` of a nano-unit amount."""
    return _ceil_div_away(nanos, 10**6)


def scheduler_amount(name: str, nanos: int) -> int:
    """What the scheduler counts of a nano-unit amount: millicores for cpu, ``Value()`` else."""
    return nanos_milli_value(nanos) if name == "cpu" else nanos_value(nanos)


def value(quantity: Fraction) -> int:
    """``Quantity.Value()``: whole units, rounded up."""
    return _ceil_away(quantity)


def milli_value(quantity: Fraction) -> int:
    """``Quantity.MilliValue()``: thousandths, rounded up."""
    return _ceil_away(quantity * 1000)


def resource_amount(name: str, raw: Any) -> int:
    """The integer the scheduler uses for a resource: millicores for cpu, ``Value()`` otherwise."""
    quantity = parse_quantity(raw)
    return milli_value(quantity) if name == "cpu" else value(quantity)


def format_amount(name: str, amount: int) -> str:
    """Render an integer amount back as a readable quantity (``1500m``, ``2Gi``)."""
    if name == "cpu":
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    for suffix, shift in sorted(_BINARY.items(), key=lambda item: -item[1]):
        if amount and amount % (1 << shift) == 0:
            return f"{amount >> shift}{suffix}"
    return str(amount)
