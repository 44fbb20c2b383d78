"""A proposed fix, before and after the engine checked it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

KINDS = (
    "lower-request",
    "add-toleration",
    "relax-node-selector",
    "relax-node-affinity",
    "relax-pod-affinity",
    "relax-topology-spread",
    "loadaware-threshold",
    "label-node",
    "untaint-node",
    "free-capacity",
)
TARGETS = ("pod", "policy", "node")
# How many of the nodes a fix makes feasible it names (best first); ``feasible`` counts all.
LISTED_NODES = 10


@dataclass(frozen=True)
class Candidate:
    """A change to try. ``cost`` orders candidates, smallest change first: how many things it
    changes (fields, tolerations, nodes, pods moved), then by how much (a fraction)."""

    kind: str
    target: str
    summary: str
    patch: dict[str, Any]
    cost: tuple[int, float]
    # free-capacity: the pods to move off each node (it changes no object).
    evict: dict[str, list[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Fix:
    """A candidate under which the engine placed the pod: the nodes it made feasible, best
    score first, and for policy and node fixes how many other pending pods it also places."""

    candidate: Candidate
    nodes: list[str]
    feasible: int
    unblocks: int | None = None

    @property
    def kind(self) -> str:
        return self.candidate.kind

    @property
    def target(self) -> str:
        return self.candidate.target

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "target": self.target,
            "summary": self.candidate.summary,
            "patch": self.candidate.patch,
            "nodes": self.nodes,
            "feasibleNodes": self.feasible,
        }
        if self.candidate.evict:
            out["evict"] = self.candidate.evict
        if self.target != "pod":
            out["unblocks"] = self.unblocks
        return out
