"""What an operator confirmed: a plan's changes by identity, and the check a push makes.

"Confirm push" shows every change of a dry-run. The push that follows plans again in a
worker, perhaps later: it writes only if every change it would make is one the operator
confirmed (a change already made by someone else simply drops out of the plan). Otherwise it
fails, writing nothing, and the operator reviews the new plan.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

IDENTITY = ("kind", "namespace", "name", "field", "action", "before", "after")


def identity(change: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(change.get(key) for key in IDENTITY)


def plan_digest(changes: Sequence[dict[str, Any]]) -> str:
    """SHA-256 of the changes' identity (object, field, action, before, after), in order."""
    canonical = [{key: change.get(key) for key in IDENTITY} for change in changes]
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def confirmed_only(changes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The identity fields of ``changes``: what a push job keeps of the confirmed plan."""
    return [{key: change.get(key) for key in IDENTITY} for change in changes]


def unconfirmed(
    planned: Sequence[dict[str, Any]], confirmed: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The planned changes that are not among the confirmed ones."""
    allowed = {identity(change) for change in confirmed}
    return [change for change in planned if identity(change) not in allowed]


def describe(change: dict[str, Any]) -> str:
    where = "/".join(p for p in (change.get("namespace"), change.get("name")) if p)
    return f"{change.get('action')} {change.get('kind')} {where} {change.get('field')}"
