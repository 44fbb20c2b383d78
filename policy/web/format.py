"""Values as people read them: cores, binary bytes, ages, percentages, label selectors, name
lists and JSON-shaped values (as text or definition-list pairs, never Python or JSON syntax)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scoring import Requirement

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


# -- label selectors, names and JSON-shaped values ---------------------------------------------

NONE = "none"
EVERY_NODE = "every node"


def label_selector(selector: Mapping[str, Any] | None) -> str:
    """A ``metav1.LabelSelector`` as Kubernetes writes it (``kubectl get -l``):
    ``{"matchLabels": {"pool": "memory"}, "matchExpressions": [{"key": "zone", "operator":
    "In", "values": ["a", "b"]}]}`` → ``"pool=memory, zone in (a,b)"``; ``{}`` selects every
    node; ``None`` (no selector) is "none"."""
    if selector is None:
        return NONE
    if not isinstance(selector, Mapping):
        return plain(selector)
    parts = [f"{key}={value}" for key, value in sorted((selector.get("matchLabels") or {}).items())]
    for expression in selector.get("matchExpressions") or []:
        if not isinstance(expression, Mapping):
            parts.append(plain(expression))
            continue
        values = tuple(str(v) for v in expression.get("values") or ())
        requirement = Requirement(
            str(expression.get("key", "")), str(expression.get("operator", "")), values
        )
        parts.append(str(requirement))
    return ", ".join(parts) if parts else EVERY_NODE


def names(items: Any) -> str:
    """A list of names: ``"node-a, node-b"``; empty or missing: "none"."""
    if not items:
        return NONE
    if isinstance(items, str):
        return items
    return ", ".join(str(item) for item in items)


def plain(value: Any) -> str:
    """Any JSON-shaped value as one line of text: ``true``, ``cpu: 70, memory: 80``,
    ``a, b``; nested mappings in braces (``leaderElect: false, renew: {seconds: 10}``);
    empty strings and ``None`` are "—", empty lists and mappings "none"."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        if not value:
            return NONE
        return ", ".join(f"{key}: {_nested(item)}" for key, item in value.items())
    if isinstance(value, list | tuple):
        if not value:
            return NONE
        return ", ".join(_nested(item) for item in value)
    return str(value)


def _nested(value: Any) -> str:
    if isinstance(value, Mapping) and value:
        return "{" + plain(value) + "}"
    if isinstance(value, list | tuple) and value:
        return "[" + plain(value) + "]"
    return plain(value)


def pairs(value: Any) -> list[tuple[str, str]] | None:
    """A non-empty mapping as (term, text) pairs for a definition list; else None.
    ``{"cpu": 70, "memory": 80}`` → ``[("cpu", "70"), ("memory", "80")]``. A list of mappings
    that each have a name (plugin args, extenders) gives a pair per item, its name first."""
    if isinstance(value, Mapping) and value:
        return [(str(key), plain(item)) for key, item in value.items()]
    if (
        isinstance(value, list)
        and value
        and all(isinstance(item, Mapping) and "name" in item for item in value)
    ):
        return [
            (str(item["name"]), plain({k: v for k, v in item.items() if k != "name"}))
            for item in value
        ]
    return None
