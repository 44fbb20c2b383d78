"""Decode annotation JSON the way Go's ``encoding/json`` decodes it into Koordinator's types.

Annotations (``scheduling.koordinator.sh/usage-thresholds``,
``node.koordinator.sh/raw-allocatable``,
``scheduling.koordinator.sh/load-estimated-scaling-factors``) are parsed by plain
``json.Unmarshal`` (apis/extension/load_aware.go, node_resource_amplification.go), whose rules
differ from Python's: struct field names match case-insensitively, unknown fields are ignored, an
``int64`` accepts only an integer literal in range, ``null`` leaves a value at its zero value, and a
key that repeats decodes again into the same value (maps merge). Any error makes the whole
annotation invalid, and Koordinator then falls back to its defaults, so one exception is enough.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from scoring.goint import fits_int64
from scoring.inputs import InputLimitError, load_json
from scoring.quantity import QuantityError, resource_amount

Pairs = list[tuple[str, Any]]


class GoJSONError(ValueError):
    """Input Go's ``json.Unmarshal`` would reject for the target type."""


class Number(str):
    """A JSON number kept as its literal text (Go decodes from the text, not a float)."""


class Object(list[tuple[str, Any]]):
    """A JSON object as its key/value pairs in order, duplicates kept."""


def _reject_constant(name: str) -> Any:
    raise GoJSONError(f"invalid character in literal {name}")


def loads(text: str) -> Any:
    """Parse JSON keeping number literals and duplicate keys; NaN/Infinity are errors, as in Go."""
    try:
        return load_json(
            text,
            parse_int=Number,
            parse_float=Number,
            parse_constant=_reject_constant,
            object_pairs_hook=Object,
        )
    except (json.JSONDecodeError, InputLimitError) as exc:
        raise GoJSONError(str(exc)) from None


def int64(value: Any) -> int:
    """An ``int64`` field: an integer literal in range (``1e2`` and ``1.0`` are errors in Go)."""
    if not isinstance(value, Number):
        raise GoJSONError(f"cannot unmarshal {_kind(value)} into int64")
    try:
        number = int(value)
    except ValueError:
        raise GoJSONError(f"cannot unmarshal number {value} into int64") from None
    if not fits_int64(number):
        raise GoJSONError(f"cannot unmarshal number {value} into int64")
    return number


def string(value: Any) -> str:
    if isinstance(value, Number) or not isinstance(value, str):
        raise GoJSONError(f"cannot unmarshal {_kind(value)} into string")
    return str(value)


def int_map(value: Any, into: dict[str, int] | None) -> dict[str, int] | None:
    """``map[ResourceName]int64``: decoding into an existing map adds to it; null resets it."""
    if value is None:
        return None
    if not isinstance(value, Object):
        raise GoJSONError(f"cannot unmarshal {_kind(value)} into map")
    out = into if into is not None else {}
    for key, item in value:
        out[key] = 0 if item is None else int64(item)
    return out


def quantity_amount(name: str, value: Any) -> int:
    """A ``resource.Quantity`` (string or number, ``UnmarshalJSON``) as the scheduler's integer."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, str):
        raise GoJSONError(f"cannot unmarshal {_kind(value)} into Quantity")
    try:
        return resource_amount(name, value.strip())
    except QuantityError as exc:
        raise GoJSONError(str(exc)) from None


def resource_list(value: Any) -> dict[str, int] | None:
    """A ``corev1.ResourceList`` as scheduler integers (cpu millicores, others ``Value()``)."""
    if value is None:
        return None
    if not isinstance(value, Object):
        raise GoJSONError(f"cannot unmarshal {_kind(value)} into ResourceList")
    return {key: quantity_amount(key, item) for key, item in value}


def decode_struct(value: Any, fields: dict[str, Callable[[Any], None]]) -> bool:
    """Feed each member to the setter of the field it names (case-insensitive, as Go matches).

    Returns False for ``null`` (Go leaves the struct untouched). Unknown members are ignored.
    """
    if value is None:
        return False
    if not isinstance(value, Object):
        raise GoJSONError(f"cannot unmarshal {_kind(value)} into struct")
    by_fold = {name.casefold(): setter for name, setter in fields.items()}
    for key, item in value:
        setter = by_fold.get(key.casefold())
        if setter is not None:
            setter(item)
    return True


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, Number):
        return f"number {value}"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Object):
        return "object"
    return "array"
