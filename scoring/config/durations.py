"""Go ``time.Duration`` text: ``time.ParseDuration`` and ``Duration.String``.

``metav1.Duration`` fields (``leaseDuration``, ``filterTimeout``, ...) are JSON strings parsed with
``time.ParseDuration`` and printed with ``Duration.String`` (``"1m"`` is printed back as
``"1m0s"``). Durations are handled as integer nanoseconds, like Go's int64.
"""

from __future__ import annotations

import re

NANOSECOND = 1
MICROSECOND = 1000 * NANOSECOND
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

_MAX = 2**63 - 1
_UNITS = {
    "ns": NANOSECOND,
    "us": MICROSECOND,
    "\u00b5s": MICROSECOND,  # micro sign
    "\u03bcs": MICROSECOND,  # Greek mu
    "ms": MILLISECOND,
    "s": SECOND,
    "m": MINUTE,
    "h": HOUR,
}
_COMPONENT = re.compile(r"([0-9]*)(?:\.([0-9]*))?([^0-9.]*)")


def parse_duration(text: str) -> int:
    """Nanoseconds of a Go duration string; ``ValueError`` with Go's message when malformed."""
    original = text
    bad = f'time: invalid duration "{original}"'
    negative = False
    if text[:1] in ("-", "+"):
        negative = text[0] == "-"
        text = text[1:]
    if text == "0":
        return 0
    if not text:
        raise ValueError(bad)
    total = 0
    while text:
        match = _COMPONENT.match(text)
        if match is None or match.end() == 0:  # pragma: no cover - the pattern always matches
            raise ValueError(bad)
        whole, frac, unit = match.group(1), match.group(2), match.group(3)
        if not whole and not frac:
            raise ValueError(bad)
        if not unit:
            raise ValueError(f'time: missing unit in duration "{original}"')
        if unit not in _UNITS:
            raise ValueError(f'time: unknown unit "{unit}" in duration "{original}"')
        scale = _UNITS[unit]
        value = int(whole or "0") * scale
        if frac:
            value += int(frac) * scale // 10 ** len(frac)
        total += value
        if total > _MAX + (1 if negative else 0):
            raise ValueError(bad)
        text = text[match.end() :]
    return -total if negative else total


def _fmt_frac(value: int, precision: int) -> tuple[str, int]:
    digits: list[str] = []
    printed = False
    for _ in range(precision):
        digit = value % 10
        printed = printed or digit != 0
        if printed:
            digits.append(str(digit))
        value //= 10
    return ("." + "".join(reversed(digits)) if printed else ""), value


def format_duration(nanoseconds: int) -> str:
    """Go's ``Duration.String()``: ``15s``, ``1m30s``, ``10m0s``, ``1.5s``, ``100ms``, ``0s``."""
    negative = nanoseconds < 0
    u = -nanoseconds if negative else nanoseconds
    if u < SECOND:
        if u == 0:
            return "0s"
        if u < MICROSECOND:
            frac, u = _fmt_frac(u, 0)
            text = f"{u}{frac}ns"
        elif u < MILLISECOND:
            frac, u = _fmt_frac(u, 3)
            text = f"{u}{frac}\u00b5s"
        else:
            frac, u = _fmt_frac(u, 6)
            text = f"{u}{frac}ms"
    else:
        frac, u = _fmt_frac(u, 9)
        text = f"{u % 60}{frac}s"
        u //= 60
        if u > 0:
            text = f"{u % 60}m{text}"
            u //= 60
            if u > 0:
                text = f"{u}h{text}"
    return "-" + text if negative else text


def canonical_duration(text: str) -> str:
    """A duration string as Go prints it back after decoding (``"1m"`` becomes ``"1m0s"``)."""
    return format_duration(parse_duration(text))
