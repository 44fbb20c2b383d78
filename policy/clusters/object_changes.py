"""Objects of a snapshot as a chain stores them: what changed since the previous snapshot, and
the whole list put back together from a keyframe and its changes (pure functions)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]
ObjectRef = tuple[str, str, str]  # kind, namespace, name


def object_ref(obj: Mapping[str, Any]) -> ObjectRef:
    metadata = obj.get("metadata") or {}
    return (
        str(obj.get("kind", "")),
        str(metadata.get("namespace") or ""),
        str(metadata.get("name") or ""),
    )


@dataclass(frozen=True)
class SnapshotChanges:
    """What changed since snapshot ``since``: objects added or modified, refs deleted."""

    since: int
    put: list[Json]
    delete: list[ObjectRef]

    def __len__(self) -> int:
        return len(self.put) + len(self.delete)


def apply_changes(objects: Iterable[Json], steps: Iterable[Mapping[str, Any]]) -> list[Json]:
    """``objects`` with each step's deletions and puts applied, in order (a modified object
    keeps its place; an added one goes last)."""
    index = {object_ref(obj): obj for obj in objects}
    for step in steps:
        for ref in step.get("delete") or []:
            index.pop((str(ref[0]), str(ref[1]), str(ref[2])), None)
        for obj in step.get("put") or []:
            index[object_ref(obj)] = obj
    return list(index.values())
