"""Reading the fields of a Kubernetes object: each rule raises :class:`ObjectError` naming the
object and the field, so a bad manifest is a clear input error rather than a crash deep inside a
plugin. Quantities are kept exact (integer nano-units) until a plugin asks for the integer the
scheduler uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from scoring.errors import InputError
from scoring.goint import INT64_MAX, fits_int64
from scoring.quantity import QuantityError, parse_nanos, scheduler_amount

ResourceList = dict[str, int]  # exact quantities in nano-units (see quantity.parse_nanos)


class ObjectError(InputError):
    """A Kubernetes object the engine cannot read; the message names object and field."""


def describe(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    name = meta.get("name", "<unnamed>")
    ns = meta.get("namespace")
    return f"{obj.get('kind', 'object')} {ns + '/' if ns else ''}{name}"


def mapping(obj: Mapping[str, Any], value: Any, path: str) -> Mapping[str, Any]:
    if type(value) is dict:  # decoded JSON: skips the slow ABC check (millions of calls)
        return value
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ObjectError(f"{describe(obj)}: {path}: expected an object, got {value!r}")
    return value


def as_list(obj: Mapping[str, Any], value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ObjectError(f"{describe(obj)}: {path}: expected a list, got {value!r}")
    return value


def parse_resource_list(obj: Mapping[str, Any], value: Any, path: str) -> ResourceList:
    """Parse a ``ResourceList`` (name → quantity), naming the field on a bad quantity.

    As the API server validates them (``ValidateResourceQuantityValue``), amounts are never
    negative; and each must fit the int64 the scheduler counts it in (millicores for cpu,
    whole units otherwise), or no sum over it means anything.
    """
    out: ResourceList = {}
    for name, raw in mapping(obj, value, path).items():
        name = str(name)
        checked = _checked_text(name, raw) if type(raw) is str else _checked(name, raw)
        if isinstance(checked, str):
            raise ObjectError(f"{describe(obj)}: {path}.{name}: {checked}")
        out[name] = checked
    return out


def _checked(name: str, raw: Any) -> int | str:
    """The amount in nano-units, or why it is refused."""
    try:
        nanos = parse_nanos(raw)
    except QuantityError as exc:
        return str(exc)
    if nanos < 0:
        return "must be greater than or equal to 0"
    if not fits_int64(scheduler_amount(name, nanos)):
        unit = "millicores" if name == "cpu" else "units"
        return f"{raw} is more than the scheduler can count ({INT64_MAX} {unit})"
    return nanos


# Pods repeat a few (name, quantity) pairs: 140,000 resource lists of a 5,000-node cluster.
_checked_text = lru_cache(maxsize=65536)(_checked)
