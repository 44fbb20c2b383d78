"""A decision's explanation (the engine contract's JSON) as compact bytes, and back, losslessly.

The explanation of one pod on a 5,000-node cluster is about 17 MB of JSON: every node's filter
results, scores and plugin details. Nodes are alike, so it is stored as columns
(:mod:`scoring.columnar`: one array per field, per plugin position) compressed with LZMA,
about 150 times smaller (docs/benchmarks.md). :func:`decode` gives back a dict equal to the
one encoded; :class:`StoredExplanation` reads a few nodes without rebuilding the others.
"""

from __future__ import annotations

import lzma
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scoring import columnar

MAGIC = b"SBX1"  # format 1: LZMA-compressed columns of [explanation]
_PRESET = 6
DEFAULT_RANKED = 100  # ranked nodes a default page shows
NODES = "nodes"


class ExplanationDataError(ValueError):
    """Bytes that are not an encoded explanation."""


def encode(explanation: Mapping[str, Any]) -> bytes:
    """The explanation as compact bytes; :class:`columnar.ColumnarError` names a value that
    is not JSON."""
    return MAGIC + lzma.compress(columnar.pack([explanation]), preset=_PRESET)


def decode(data: bytes) -> dict[str, Any]:
    """The explanation :func:`encode` was given."""
    return StoredExplanation(data).to_dict()


@dataclass(frozen=True)
class FilteredGroup:
    """Filtered nodes that failed the same filters with the same reasons."""

    failures: tuple[tuple[str, str, str | None], ...]  # (plugin, code, reason)
    count: int
    first: int  # node position of the group's first node (by name)

    def to_dict(self, names: Sequence[str]) -> dict[str, Any]:
        return {
            "failures": [
                {"plugin": plugin, "code": code, "reason": reason}
                for plugin, code, reason in self.failures
            ],
            "count": self.count,
            "example": names[self.first],
        }


@dataclass(frozen=True)
class NodeSelection:
    """Which nodes of a decision a response shows, and what it leaves out."""

    positions: list[int]  # node positions, in the explanation's order
    total: int
    ranked: int
    groups: list[FilteredGroup]

    @property
    def omitted(self) -> int:
        return self.total - len(self.positions)


class StoredExplanation:
    """An encoded explanation, read lazily: top-level fields, node names and the nodes asked
    for are rebuilt without rebuilding every node."""

    def __init__(self, data: bytes) -> None:
        if not data.startswith(MAGIC):
            raise ExplanationDataError("not an encoded explanation (unknown header)")
        try:
            payload = lzma.decompress(memoryview(data)[len(MAGIC) :])
        except lzma.LZMAError as exc:
            raise ExplanationDataError(f"encoded explanation is corrupt: {exc}") from None
        try:
            self._root = columnar.unpack(payload)
        except columnar.ColumnarError as exc:
            raise ExplanationDataError(str(exc)) from None
        if len(self._root) != 1:
            raise ExplanationDataError("encoded explanation holds no explanation")
        nodes = self._root.child(NODES)
        self._nodes = nodes.items() if nodes is not None else None
        self._names: list[Any] | None = None

    def to_dict(self, positions: Sequence[int] | None = None) -> dict[str, Any]:
        """The whole explanation; with ``positions``, only those nodes in its node list."""
        if positions is None or self._nodes is None:
            explanation: dict[str, Any] = self._root.take([0])[0]
            return explanation
        return {
            key: self.nodes(positions) if key == NODES else self._root.field(key, [0])[0]
            for key in self._root.keys(0)
        }

    def header(self) -> dict[str, Any]:
        """Every top-level field but ``nodes``, in order."""
        return {key: self._root.field(key, [0])[0] for key in self._root.keys(0) if key != NODES}

    @property
    def node_count(self) -> int:
        return 0 if self._nodes is None else len(self._nodes)

    def nodes(self, positions: Sequence[int] | None = None) -> list[dict[str, Any]]:
        """The node entries at ``positions`` (default: all), in the order asked."""
        if self._nodes is None:
            if positions:
                raise IndexError("the explanation has no node list")
            return []
        return self._nodes.take(positions)

    def names(self) -> list[Any]:
        if self._names is None:
            self._names = [] if self._nodes is None else self._nodes.field("name")
        return self._names

    def feasible(self) -> list[Any]:
        """Each node's ``feasible`` flag, in order."""
        return [] if self._nodes is None else self._nodes.field("feasible")

    def position_of(self, name: str) -> int | None:
        try:
            return self.names().index(name)
        except ValueError:
            return None

    def select(self, offset: int | None = None, limit: int | None = None) -> NodeSelection:
        """Nodes ``offset … offset + limit`` (see :func:`select_nodes`)."""
        nodes = self._nodes

        def filters_of(rows: list[int]) -> list[Any]:
            if nodes is None or not rows:
                return []
            filters: list[Any] = nodes.field("filters", np.asarray(rows, dtype=np.int64))
            return filters

        return select_nodes(self.feasible(), filters_of, offset, limit)


def select_nodes(
    feasible: Sequence[Any],
    filters_of: Callable[[list[int]], Sequence[Any]],
    offset: int | None = None,
    limit: int | None = None,
) -> NodeSelection:
    """Nodes ``offset … offset + limit`` in the explanation's order (ranked nodes first, then
    filtered ones by name); without either, the best ``DEFAULT_RANKED`` ranked nodes plus the
    first node of every group of filtered nodes. ``feasible``: each node's flag, in order;
    ``filters_of``: the ``filters`` lists of the nodes at some positions."""
    total = len(feasible)
    ranked = [k for k, flag in enumerate(feasible) if flag is True]
    groups = _groups([k for k, flag in enumerate(feasible) if flag is not True], filters_of)
    if offset is None and limit is None:
        positions = sorted({*ranked[:DEFAULT_RANKED], *(group.first for group in groups)})
    else:
        start = offset or 0
        end = total if limit is None else min(total, start + limit)
        positions = list(range(min(start, total), end))
    return NodeSelection(positions, total, len(ranked), groups)


def select_in(
    explanation: Mapping[str, Any], offset: int | None = None, limit: int | None = None
) -> NodeSelection:
    """:func:`select_nodes` over an explanation held as a dict (one just made)."""
    nodes = explanation.get(NODES) or []
    return select_nodes(
        [node.get("feasible") for node in nodes],
        lambda rows: [nodes[k].get("filters") for k in rows],
        offset,
        limit,
    )


def _groups(
    filtered: list[int], filters_of: Callable[[list[int]], Sequence[Any]]
) -> list[FilteredGroup]:
    """Filtered nodes grouped by their failing filters, largest group first."""
    if not filtered:
        return []
    members: dict[tuple[tuple[str, str, str | None], ...], list[int]] = {}
    for position, filters in zip(filtered, filters_of(filtered), strict=True):
        key = tuple(
            (str(f.get("plugin")), str(f.get("code")), f.get("reason"))
            for f in filters or ()
            if isinstance(f, dict) and f.get("code") != "Success"
        )
        members.setdefault(key, []).append(position)
    groups = [FilteredGroup(key, len(nodes), nodes[0]) for key, nodes in members.items()]
    return sorted(groups, key=lambda g: (-g.count, g.first))
