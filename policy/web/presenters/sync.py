"""What the sync pages show: a plan's changes object by object, job timings.

What makes "Confirm push" safe is in :mod:`policy.sync.confirmation`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from policy.web.format import age
from policy.web.presenters.policies import diff_lines

# Values up to this long, on one line, are shown as before → after; others as a diff.
INLINE_CHARS = 160


def _inline(value: str | None) -> bool:
    return value is None or ("\n" not in value.rstrip("\n") and len(value) <= INLINE_CHARS)


@dataclass(frozen=True)
class ChangeRow:
    """One field of one object a push writes (or wrote)."""

    object_ref: str
    field: str
    action: str
    before: str | None
    after: str | None
    diff: list[tuple[str, str]]
    note: str = ""  # a write not heard back from, or found in place by a retry

    @property
    def inline(self) -> bool:
        """Short one-line values read best side by side; the rest as a unified diff."""
        return _inline(self.before) and _inline(self.after)


def change_rows(changes: Sequence[dict[str, Any]]) -> list[ChangeRow]:
    rows = []
    for change in changes:
        where = f"{change['namespace']}/" if change.get("namespace") else ""
        rows.append(
            ChangeRow(
                object_ref=f"{change['kind']}/{where}{change['name']}",
                field=change["field"],
                action=change["action"],
                before=change.get("before"),
                after=change.get("after"),
                diff=diff_lines(change.get("diff") or ""),
                note=_note(change),
            )
        )
    return rows


def _note(change: dict[str, Any]) -> str:
    if change.get("inFlight"):
        return "in flight: not heard back from yet"
    if change.get("landedUnheard"):
        return "written before its worker stopped; found in place by the retry"
    return ""


def change_summary(changes: Sequence[dict[str, Any]]) -> str:
    """``"3 changes to 3 objects: 2 add, 1 update"``."""
    if not changes:
        return "No change."
    actions = Counter(change["action"] for change in changes)
    objects = {(c["kind"], c.get("namespace"), c["name"]) for c in changes}
    parts = ", ".join(f"{actions[a]} {a}" for a in ("add", "update", "remove") if actions[a])
    n, m = len(changes), len(objects)
    return f"{n} change{'s' if n != 1 else ''} to {m} object{'s' if m != 1 else ''}: {parts}"


def duration(seconds: float | None) -> str:
    """``0.23`` → ``"0.2 s"``; minutes and hours as :func:`policy.web.format.age` says them."""
    if seconds is None:
        return "—"
    if seconds < 10:
        return f"{seconds:.1f} s"
    return age(seconds)
