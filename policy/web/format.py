"""Numbers as people read them: cores, binary bytes, ages, percentages."""

from __future__ import annotations

GI = 2**30
MI = 2**20
KI = 2**10


def cores(millicores: int | None) -> str:
    """``15840`` → ``"15.84"`` (cores, at most two decimals)."""
    if millicores is None:
        return "—"
    value = millicores / 1000
    return f"{value:.2f}".rstrip("0").rstrip(".") if value % 1 else f"{value:.0f}"


def binary(amount: int | None) -> str:
    """Bytes in the largest binary unit that keeps a digit before the point: ``"63.5 Gi"``."""
    if amount is None:
        return "—"
    for unit, size in (("Ti", 2**40), ("Gi", GI), ("Mi", MI), ("Ki", KI)):
        if abs(amount) >= size:
            value = amount / size
            text = f"{value:.1f}".rstrip("0").rstrip(".")
            return f"{text} {unit}"
    return f"{amount} B"


def amount(resource: str, value: int | None) -> str:
    """A scheduler integer of ``resource`` (cpu in millicores, memory-like in bytes)."""
    if value is None:
        return "—"
    if resource == "cpu":
        return cores(value)
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        return binary(value)
    return str(value)


def unit(resource: str) -> str:
    return "cores" if resource == "cpu" else ""


def age(seconds: float | None) -> str:
    """``52`` → ``"52 s"``, ``1260`` → ``"21 min"``, ``90000`` → ``"25 h"``."""
    if seconds is None:
        return "—"
    if seconds < 0:
        return f"{seconds:.0f} s (in the future)"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / 86400:.0f} d"


def percent(value: float | int | None) -> str:
    if value is None:
        return "—"
    if isinstance(value, float) and value % 1:
        return f"{value:.1f}%"
    return f"{value:.0f}%"


def ratio(numerator: int, denominator: int) -> float | None:
    """``numerator / denominator`` in percent, one decimal; None when the denominator is 0."""
    if denominator <= 0:
        return None
    return round(100 * numerator / denominator, 1)
