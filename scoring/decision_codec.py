"""A decision's explanation (the engine contract's JSON) as compact bytes, and back, losslessly.

The explanation of one pod on a 5,000-node cluster is about 17 MB of JSON: every node's filter
results, scores and plugin details. Nodes are alike, so it is stored as columns
(:mod:`scoring.columnar`: one array per field, per plugin position), nodes by name
(:mod:`scoring.decision_order`), compressed with Zstandard. Much of a node's columns is the
snapshot's, not the pod's (usage, requests, limits, metric times): decisions made on one
snapshot are compressed with a :class:`Base`, the columns of one of them, as dictionary, so
that part is stored once per snapshot (docs/benchmarks.md). :func:`decode` gives back a dict
equal to the one encoded; :class:`StoredExplanation` reads a few nodes without rebuilding the
others. Format 1 (LZMA, nodes in the engine's order, no base) is still read.
"""

from __future__ import annotations

import hashlib
import lzma
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import zstandard

from scoring import columnar
from scoring.decision import Decision
from scoring.decision_columns import explanation_columns
from scoring.decision_order import NODES as NODES
from scoring.decision_order import by_name, explanation_order

MAGIC_V1 = b"SBX1"  # format 1: LZMA-compressed columns of [explanation]
MAGIC = b"SBX2"  # format 2: flags, base digest, Zstandard-compressed columns of [explanation]
MAGIC_BASE = b"SBB2"  # a base: Zstandard-compressed columns of [explanation]
BY_NAME = 1  # flag: nodes stored by name (scoring.decision_order)
WITH_BASE = 2  # flag: compressed with a base as dictionary
DIGEST = 8  # bytes of a base's SHA-256 a decision names it by
LEVEL = 9  # Zstandard level: 17 saves 3 % of the bytes for 4x the time (docs/benchmarks.md)
_V1_PRESET = 6
DEFAULT_RANKED = 100  # ranked nodes a default page shows


class ExplanationDataError(ValueError):
    """Bytes that are not an encoded explanation, or not with the base given."""


@dataclass(frozen=True)
class Packed:
    """An explanation's uncompressed columns, and whether its nodes are stored by name."""

    payload: bytes
    flags: int


def pack(explanation: Mapping[str, Any]) -> Packed:
    """The explanation's columns; :class:`columnar.ColumnarError` names a value that is not
    JSON."""
    stored = by_name(explanation)
    if stored is None:
        return Packed(columnar.pack([explanation]), 0)
    return Packed(columnar.pack([stored]), BY_NAME)


def pack_decision(decision: Decision) -> Packed:
    """``pack(decision.to_dict())``, the same bytes, from the decision's arrays (no per-node
    dicts: :mod:`scoring.decision_columns`)."""
    root, stored_by_name = explanation_columns(decision)
    return Packed(columnar.pack(root), BY_NAME if stored_by_name else 0)


class Base:
    """The columns of one explanation, which others on the same snapshot are compressed
    against: what they share with it is stored once, in the base."""

    def __init__(self, payload: bytes) -> None:
        self.payload = payload
        self.digest = hashlib.sha256(payload).digest()[:DIGEST]
        self.dictionary = zstandard.ZstdCompressionDict(
            payload, dict_type=zstandard.DICT_TYPE_RAWCONTENT
        )
        self._precomputed = False

    def for_compressing(self) -> zstandard.ZstdCompressionDict:
        """The dictionary, its compression tables made once (every decision on the snapshot
        uses them; reading needs none)."""
        if not self._precomputed:
            self.dictionary.precompute_compress(level=LEVEL)
            self._precomputed = True
        return self.dictionary

    def to_bytes(self) -> bytes:
        return MAGIC_BASE + _compress(self.payload, None)

    @classmethod
    def from_bytes(cls, data: bytes) -> Base:
        if not data.startswith(MAGIC_BASE):
            raise ExplanationDataError("not an explanation base (unknown header)")
        return cls(_decompress(memoryview(data)[len(MAGIC_BASE) :], None))


def encode(explanation: Mapping[str, Any] | Packed, base: Base | None = None) -> bytes:
    """The explanation as compact bytes (compressed against ``base`` when given: reading them
    back needs the same base)."""
    packed = explanation if isinstance(explanation, Packed) else pack(explanation)
    flags = packed.flags | (WITH_BASE if base is not None else 0)
    digest = base.digest if base is not None else bytes(DIGEST)
    return MAGIC + bytes([flags]) + digest + _compress(packed.payload, base)


def base_digest(data: bytes) -> bytes | None:
    """The digest of the base encoded ``data`` needs, or None when it needs none."""
    if data.startswith(MAGIC) and len(data) > len(MAGIC) + DIGEST and data[4] & WITH_BASE:
        return bytes(data[5 : 5 + DIGEST])
    return None


def decode(data: bytes, base: Base | None = None) -> dict[str, Any]:
    """The explanation :func:`encode` was given."""
    return StoredExplanation(data, base).to_dict()


def _compress(payload: bytes, base: Base | None) -> bytes:
    dictionary = base.for_compressing() if base is not None else None
    compressor = zstandard.ZstdCompressor(level=LEVEL, dict_data=dictionary, write_checksum=True)
    return compressor.compress(payload)


def _decompress(frame: bytes | memoryview, base: Base | None) -> bytes:
    dictionary = base.dictionary if base is not None else None
    try:
        return zstandard.ZstdDecompressor(dict_data=dictionary).decompress(frame)
    except zstandard.ZstdError as exc:
        raise ExplanationDataError(f"encoded explanation is corrupt: {exc}") from None


def _payload(data: bytes, base: Base | None) -> tuple[bytes, int]:
    """The columns and flags of encoded ``data`` (either format)."""
    view = memoryview(data)
    if data.startswith(MAGIC_V1):
        try:
            return lzma.decompress(view[len(MAGIC_V1) :]), 0
        except lzma.LZMAError as exc:
            raise ExplanationDataError(f"encoded explanation is corrupt: {exc}") from None
    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + 1 + DIGEST:
        raise ExplanationDataError("not an encoded explanation (unknown header)")
    flags = data[4]
    if flags & WITH_BASE:
        if base is None:
            raise ExplanationDataError("the encoded explanation needs its base")
        if base.digest != data[5 : 5 + DIGEST]:
            raise ExplanationDataError("the encoded explanation was made with another base")
    return _decompress(view[5 + DIGEST :], base if flags & WITH_BASE else None), flags


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

    def __init__(self, data: bytes, base: Base | None = None) -> None:
        payload, flags = _payload(data, base)
        try:
            self._root = columnar.unpack(payload)
        except columnar.ColumnarError as exc:
            raise ExplanationDataError(str(exc)) from None
        if len(self._root) != 1:
            raise ExplanationDataError("encoded explanation holds no explanation")
        nodes = self._root.child(NODES)
        self._nodes = nodes.items() if nodes is not None else None
        self._names: list[Any] | None = None
        self._order: list[int] | None = None  # stored rows in the engine's order
        if flags & BY_NAME and self._nodes is not None:
            self._order = explanation_order(
                self._nodes.field("feasible"), self._nodes.field("totalScore")
            )
            if self._order is None or len(self._order) != len(self._nodes):
                raise ExplanationDataError("encoded explanation's node order is corrupt")

    def _rows(self, positions: Sequence[int] | None) -> list[int] | None:
        """Stored rows of the nodes at ``positions`` (None: all) in the engine's order."""
        if self._order is None:
            return None if positions is None else list(positions)
        if positions is None:
            return self._order
        return [self._order[p] for p in positions]

    def to_dict(self, positions: Sequence[int] | None = None) -> dict[str, Any]:
        """The whole explanation; with ``positions``, only those nodes in its node list."""
        if self._nodes is None:
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
        return self._nodes.take(self._rows(positions))

    def names(self) -> list[Any]:
        if self._names is None:
            self._names = self._field("name")
        return self._names

    def feasible(self) -> list[Any]:
        """Each node's ``feasible`` flag, in order."""
        return self._field("feasible")

    def _field(self, key: str, positions: Sequence[int] | None = None) -> list[Any]:
        """Field ``key`` of the nodes at ``positions`` (default: all), in the engine's order."""
        if self._nodes is None:
            return []
        rows = self._rows(positions)
        return self._nodes.field(key, None if rows is None else np.asarray(rows, dtype=np.int64))

    def position_of(self, name: str) -> int | None:
        try:
            return self.names().index(name)
        except ValueError:
            return None

    def select(self, offset: int | None = None, limit: int | None = None) -> NodeSelection:
        """Nodes ``offset … offset + limit`` (see :func:`select_nodes`)."""

        def filters_of(rows: list[int]) -> list[Any]:
            return self._field("filters", rows) if rows else []

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
    filtered = [k for k, flag in enumerate(feasible) if flag is not True]
    return select_grouped(feasible, _groups(filtered, filters_of), offset, limit)


def select_grouped(
    feasible: Sequence[Any],
    groups: list[FilteredGroup],
    offset: int | None = None,
    limit: int | None = None,
) -> NodeSelection:
    """:func:`select_nodes` with the filtered nodes' ``groups`` already made (largest first)."""
    total = len(feasible)
    ranked = [k for k, flag in enumerate(feasible) if flag is True]
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
    return largest_first(FilteredGroup(key, len(nodes), nodes[0]) for key, nodes in members.items())


def largest_first(groups: Iterable[FilteredGroup]) -> list[FilteredGroup]:
    """Groups in the order an explanation lists them: largest first, then by first node."""
    return sorted(groups, key=lambda g: (-g.count, g.first))
