"""What the sync pages show: a plan's changes (identical ones grouped), its notes, job timings.

What makes "Confirm push" safe is in :mod:`policy.sync.confirmation`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as default
from functools import cached_property
from typing import Any

from policy.web.format import age
from policy.web.presenters.policies import diff_lines

# Values up to this long, on one line, are shown as before → after; others as a diff.
INLINE_CHARS = 160


def _inline(value: str | None) -> bool:
    return value is None or ("\n" not in value.rstrip("\n") and len(value) <= INLINE_CHARS)


# Objects named in a group's line; the rest are one click away, a page at a time.
NAMES_SHOWN = 12
GROUPS_PER_PAGE = 50
OBJECTS_PER_PAGE = 200


@dataclass
class ChangeGroup:
    """Changes that write the same thing to objects of one kind: one field, one action, the
    same value before and after (442 nodes getting the same annotation read as one line)."""

    number: int
    kind: str
    field: str
    action: str
    before: str | None
    after: str | None
    raw_diff: str  # the first change's, for values shown as a diff
    objects: list[str] = default(default_factory=list)  # "name" or "namespace/name"

    @property
    def count(self) -> int:
        return len(self.objects)

    @property
    def object_ref(self) -> str:
        """``Node/a`` for one object; ``Node`` (the kind) for a group."""
        return f"{self.kind}/{self.objects[0]}" if self.count == 1 else self.kind

    @property
    def shown(self) -> list[str]:
        return self.objects[:NAMES_SHOWN]

    note: str = ""  # a write not heard back from, or found in place by a retry

    @property
    def inline(self) -> bool:
        return _inline(self.before) and _inline(self.after)

    @cached_property
    def diff(self) -> list[tuple[str, str]]:
        return diff_lines(self.raw_diff)


def change_groups(changes: Sequence[dict[str, Any]]) -> list[ChangeGroup]:
    """The changes grouped by kind, field, action and values, in the plan's order of first
    appearance; each group's objects in the plan's order."""
    groups: dict[tuple[Any, ...], ChangeGroup] = {}
    for change in changes:
        key = (
            change["kind"],
            change["field"],
            change["action"],
            change.get("before"),
            change.get("after"),
            _note(change),
        )
        group = groups.get(key)
        if group is None:
            group = groups[key] = ChangeGroup(
                len(groups) + 1, *key[:5], raw_diff=change.get("diff") or "", note=key[5]
            )
        where = f"{change['namespace']}/" if change.get("namespace") else ""
        group.objects.append(f"{where}{change['name']}")
    return list(groups.values())


_NODE_NOTE = re.compile(r"^node (?P<node>[^:\s]+)(?P<rest>(: | ).+)$")


@dataclass
class NoteGroup:
    """Notes saying the same of several nodes ("…was set by someone else; left alone")."""

    text: str
    nodes: list[str] = default(default_factory=list)

    @property
    def listed(self) -> list[str]:
        """The nodes named on the page (the first page's worth)."""
        return self.nodes[:OBJECTS_PER_PAGE]

    @property
    def more(self) -> int:
        return len(self.nodes) - len(self.listed)


def note_groups(notes: Sequence[str]) -> list[NoteGroup]:
    """Notes about nodes grouped by what they say (``text`` then reads "node X…" for one node
    and "N nodes…" for more); other notes one each."""
    groups: dict[str, NoteGroup] = {}
    for note in notes:
        match = _NODE_NOTE.match(note)
        if match is None:
            groups.setdefault(note, NoteGroup(note))
            continue
        group = groups.setdefault(f"node …{match['rest']}", NoteGroup(match["rest"]))
        group.nodes.append(match["node"])
    for group in groups.values():
        if len(group.nodes) == 1:
            group.text = f"node {group.nodes[0]}{group.text}"
        elif group.nodes:
            group.text = f"{len(group.nodes):,} nodes{group.text}"
    return list(groups.values())


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
