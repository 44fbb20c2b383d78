"""Service errors placed on the fields of the request at fault, for the API's 400 bodies and
the editors' forms alike."""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any

from policy.policies.services import LocatedError

NON_FIELD = "non_field_errors"


def located_body(
    errors: Sequence[LocatedError],
    *,
    kind: str,
    object_id: int | None,
    changed: AbstractSet[str] = frozenset(),
) -> dict[str, Any]:
    """A 400 body for service errors, relative to the object the request is about.

    An error on another object of the same kind, in a field this request changes, is the
    request's fault too (a schedulerName that duplicates another profile's is reported by
    the engine on the later profile): it is reported on the request's field as well.
    """
    entries = []
    keyed: dict[str, list[str]] = {}
    for error in errors:
        own = error.kind == kind and (object_id is None or error.object_id in (object_id, None))
        if not own and error.kind == kind and _key(error.field) in changed:
            keyed.setdefault(_key(error.field), []).append(
                f"{error.detail} ({error.path})" if error.path else error.detail
            )
        field = error.field if own else error.path
        entries.append({"field": field, "type": error.type, "detail": error.detail})
        key = _key(field) if own and field else NON_FIELD
        message = error.detail if own and field else _prefixed(field, error.detail)
        keyed.setdefault(key, []).append(message)
    return {"errors": entries, **keyed}


def _key(field: str) -> str:
    """The DRF key of a field path: its first name (``plugin_config[2].args`` -> plugin_config)."""
    for i, char in enumerate(field):
        if char in ".[":
            return field[:i] or NON_FIELD
    return field


def _prefixed(field: str, detail: str) -> str:
    return f"{field}: {detail}" if field else detail
