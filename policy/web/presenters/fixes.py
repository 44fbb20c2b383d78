"""The "How to place this pod" section: each verified fix as a row people can act on."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

TARGETS = {"pod": "the pod", "policy": "the policy", "node": "a node"}


@dataclass(frozen=True)
class FixRow:
    kind: str
    target: str
    summary: str
    patch: str  # JSON, as the API gives it
    nodes: list[str]
    feasible: int
    unblocks: int | None
    evict: list[tuple[str, list[str]]]
    edit: int | None  # the LoadAware args object a policy fix changes, when stored here


def fix_rows(fixes: Sequence[Mapping[str, Any]]) -> list[FixRow]:
    rows = []
    for fix in fixes:
        patch = fix.get("patch") or {}
        target = patch.get("object") if fix["target"] == "policy" else None
        shown = {k: v for k, v in patch.items() if k != "object"}
        rows.append(
            FixRow(
                kind=fix["kind"],
                target=TARGETS.get(fix["target"], fix["target"]),
                summary=fix["summary"],
                patch=json.dumps(shown, indent=1) if shown else "",
                nodes=list(fix.get("nodes") or []),
                feasible=int(fix.get("feasibleNodes") or 0),
                unblocks=fix.get("unblocks"),
                evict=sorted((fix.get("evict") or {}).items()),
                edit=target["id"] if isinstance(target, Mapping) else None,
            )
        )
    return rows
