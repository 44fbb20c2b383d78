"""One field of one object that a push would change, and its diff for the people confirming it."""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scoring import load_json


@dataclass(frozen=True)
class Change:
    """One field of one object that differs: ``before`` is the cluster's value (None: absent),
    ``after`` what schedboard wants (None: remove). ``resource_version`` is the object's
    version when planned (None: the object does not exist yet); it is the write's
    precondition, not part of the change's identity."""

    kind: str
    namespace: str
    name: str
    field: str
    before: str | None
    after: str | None
    resource_version: str | None = dataclasses.field(default=None, compare=False, repr=False)

    @property
    def action(self) -> str:
        if self.before is None:
            return "add"
        return "remove" if self.after is None else "update"

    @property
    def object_ref(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{where}{self.name}"

    @property
    def diff(self) -> str:
        return unified_diff(self.before, self.after, f"{self.object_ref} {self.field}")

    def as_dict(self) -> dict[str, Any]:
        """For the API and the confirmation page."""
        return {
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "field": self.field,
            "action": self.action,
            "before": self.before,
            "after": self.after,
            "diff": self.diff,
        }


# Told of each write as soon as it landed (a push job records it there and then).
OnWrite = Callable[[Change], None]


def _readable(text: str | None) -> list[str]:
    """Lines to diff: JSON values pretty-printed, so a one-line annotation diffs per field."""
    if text is None:
        return []
    try:
        value = load_json(text)
    except ValueError:  # InputLimitError is one too
        value = None
    if isinstance(value, dict | list):
        text = json.dumps(value, indent=2, sort_keys=True)
    return text.splitlines(keepends=True)


def unified_diff(
    before: str | None,
    after: str | None,
    label: str,
    *,
    sides: tuple[str, str] = ("cluster", "schedboard"),
) -> str:
    """A unified diff of ``label`` from ``before`` to ``after`` (``/dev/null`` when absent);
    ``sides`` name where each comes from (for a plan: the cluster's value, then schedboard's)."""
    lines = difflib.unified_diff(
        _readable(before),
        _readable(after),
        fromfile=f"{sides[0]}: {label}" if before is not None else "/dev/null",
        tofile=f"{sides[1]}: {label}" if after is not None else "/dev/null",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
