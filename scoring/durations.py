"""Go ``time.Duration`` text, as ``metav1.Duration`` reads and writes it.

``metav1.Duration`` fields of the scheduler configuration (``leaseDuration``, ``filterTimeout``,
...), ``aggregated.usageAggregatedDuration`` in the LoadAware args,
``aggregatedUsage.usageAggregatedDuration`` in the node annotation and
``aggregatedNodeUsages[].duration`` in NodeMetric are JSON strings parsed by
``time.ParseDuration`` and printed by ``Duration.String`` ("5m" reads back as "5m0s").
This follows Go's src/time/format.go byte for byte, including its float64 step for fractions
("1.5h"), its overflow checks and its error messages, so a duration is compared (as an int64 of
nanoseconds) exactly as Koordinator compares it.
"""

from __future__ import annotations

NANOSECOND = 1
MICROSECOND = 1000
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

_UNITS: dict[bytes, int] = {
    b"ns": NANOSECOND,
    b"us": MICROSECOND,
    "\u00b5s".encode(): MICROSECOND,  # micro sign
    "\u03bcs".encode(): MICROSECOND,  # Greek small letter mu
    b"ms": MILLISECOND,
    b"s": SECOND,
    b"m": MINUTE,
    b"h": HOUR,
}
_LIMIT = 1 << 63
_DIGITS = frozenset(b"0123456789")


class DurationError(ValueError):
    """A string ``time.ParseDuration`` rejects; the message is Go's."""


def _quote(raw: bytes) -> str:
    """``time.quote``: double quotes, non-ASCII and control bytes as ``\\xNN``."""
    out = ['"']
    for byte in raw:
        if byte >= 0x80 or byte < 0x20:
            out.append(f"\\x{byte:02x}")
        else:
            if byte in (0x22, 0x5C):
                out.append("\\")
            out.append(chr(byte))
    out.append('"')
    return "".join(out)


def _leading_int(s: bytes) -> tuple[int, bytes] | None:
    value = 0
    i = 0
    while i < len(s) and s[i] in _DIGITS:
        if value > _LIMIT // 10:
            return None
        value = value * 10 + s[i] - 0x30
        if value > _LIMIT:
            return None
        i += 1
    return value, s[i:]


def _leading_fraction(s: bytes) -> tuple[int, float, bytes]:
    value, scale, overflow, i = 0, 1.0, False, 0
    while i < len(s) and s[i] in _DIGITS:
        if not overflow:
            if value > (_LIMIT - 1) // 10:
                overflow = True
            else:
                candidate = value * 10 + s[i] - 0x30
                if candidate > _LIMIT:
                    overflow = True
                else:
                    value, scale = candidate, scale * 10
        i += 1
    return value, scale, s[i:]


def parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration string (``time.ParseDuration``)."""
    original = text.encode()
    invalid = DurationError(f"time: invalid duration {_quote(original)}")
    s = original
    negative = False
    if s[:1] in (b"-", b"+"):
        negative = s[:1] == b"-"
        s = s[1:]
    if s == b"0":
        return 0
    if not s:
        raise invalid
    total = 0
    while s:
        if not (s[0] == 0x2E or s[0] in _DIGITS):
            raise invalid
        before = len(s)
        leading = _leading_int(s)
        if leading is None:
            raise invalid
        whole, s = leading
        has_whole = before != len(s)
        fraction, scale, has_fraction = 0, 1.0, False
        if s[:1] == b".":
            s = s[1:]
            before = len(s)
            fraction, scale, s = _leading_fraction(s)
            has_fraction = before != len(s)
        if not has_whole and not has_fraction:
            raise invalid
        i = 0
        while i < len(s) and not (s[i] == 0x2E or s[i] in _DIGITS):
            i += 1
        if i == 0:
            raise DurationError(f"time: missing unit in duration {_quote(original)}")
        unit_text, s = s[:i], s[i:]
        unit = _UNITS.get(unit_text)
        if unit is None:
            raise DurationError(
                f"time: unknown unit {_quote(unit_text)} in duration {_quote(original)}"
            )
        if whole > _LIMIT // unit:
            raise invalid
        value = whole * unit
        if fraction > 0:
            # Go: v += uint64(float64(f) * (float64(unit) / scale)).
            value += int(float(fraction) * (float(unit) / scale))
            if value > _LIMIT:
                raise invalid
        total += value
        if total > _LIMIT:
            raise invalid
    if negative:
        return -total
    if total > _LIMIT - 1:
        raise invalid
    return total


def _fraction(value: int, precision: int) -> tuple[str, int]:
    """``fmtFrac``: the digits of value / 10**precision after the point, trailing zeros cut."""
    digits = []
    printed = False
    for _ in range(precision):
        digit = value % 10
        printed = printed or digit != 0
        if printed:
            digits.append(str(digit))
        value //= 10
    text = "." + "".join(reversed(digits)) if printed else ""
    return text, value


def format_duration(nanoseconds: int) -> str:
    """``Duration.String``: "5m0s", "1h30m0s", "-1m0s", "1.5s", "300ms", "0s"."""
    negative = nanoseconds < 0
    u = -nanoseconds if negative else nanoseconds
    if u < SECOND:
        if u == 0:
            return "0s"
        if u < MICROSECOND:
            unit, precision = "ns", 0
        elif u < MILLISECOND:
            unit, precision = "\u00b5s", 3
        else:
            unit, precision = "ms", 6
        frac, u = _fraction(u, precision)
        text = f"{u}{frac}{unit}"
    else:
        frac, u = _fraction(u, 9)
        text = f"{u % 60}{frac}s"
        u //= 60
        if u > 0:
            text = f"{u % 60}m{text}"
            u //= 60
            if u > 0:
                text = f"{u}h{text}"
    return f"-{text}" if negative else text


def canonical_duration(text: str) -> str:
    """A duration string as Go prints it back after decoding (``"1m"`` becomes ``"1m0s"``)."""
    return format_duration(parse_duration(text))
