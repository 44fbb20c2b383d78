"""Which nodes changed, and how, since a cached result was computed.

The journal is a snapshot extension: it hears every placement and removal (``pod_added`` /
``pod_removed``) and every node, NodeMetric and NRT change (``node_event``), and appends
``(kind, node)``. A cache entry remembers the journal length when it was last brought up to date;
the nodes to recompute are the entries since then whose kind the plugin depends on. Reading the
few events since the last use is cheaper than comparing per-node generation arrays.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from scoring.objects import Pod
from scoring.snapshot import EVENT_KINDS, POD_EVENT, IntArray, Snapshot

JOURNAL_KEY = "simulation.journal"
_CODES = {kind: 1 << k for k, kind in enumerate(EVENT_KINDS)}
_SHORT = 64  # up to this many events are scanned in Python, more with numpy


def kind_mask(kinds: Iterable[str]) -> int:
    """Bit mask of the snapshot event kinds among ``kinds`` (others, e.g. "clock", ignored)."""
    mask = 0
    for kind in kinds:
        mask |= _CODES.get(kind, 0)
    return mask


class _Singletons:
    """Read-only one-element index arrays, made once per node (not once per lookup)."""

    def __init__(self) -> None:
        self._arrays: dict[int, IntArray] = {}

    def __getitem__(self, node: int) -> IntArray:
        array = self._arrays.get(node)
        if array is None:
            array = self._arrays[node] = np.array([node], dtype=np.int64)
            array.flags.writeable = False
        return array


_NONE: IntArray = np.zeros(0, dtype=np.int64)
_NONE.flags.writeable = False


class ChangeJournal:
    """Append-only ``(kind, node)`` log of one snapshot's changes."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._kinds: list[int] = []
        self._nodes: list[int] = []
        self._one = _Singletons()

    def __len__(self) -> int:
        return len(self._nodes)

    def _append(self, kind: str, node: int) -> None:
        self._kinds.append(_CODES[kind])
        self._nodes.append(node)

    def pod_added(self, pod: Pod, node: int) -> None:
        self._append(POD_EVENT, node)

    def pod_removed(self, pod: Pod, node: int) -> None:
        self._append(POD_EVENT, node)

    def node_event(self, kind: str, node: int) -> None:
        self._append(kind, node)

    def changed_since(self, position: int, mask: int) -> IntArray:
        """Sorted distinct nodes with an event of a ``mask`` kind at or after ``position``."""
        if len(self._nodes) - position == 1:  # the common case: one placement since last use
            return self._one[self._nodes[position]] if self._kinds[position] & mask else _NONE
        kinds, nodes = self._kinds[position:], self._nodes[position:]
        if len(nodes) <= _SHORT:
            picked = {n for k, n in zip(kinds, nodes, strict=True) if k & mask}
            return np.array(sorted(picked), dtype=np.int64) if picked else _NONE
        relevant = (np.array(kinds, dtype=np.int64) & mask) != 0
        result: IntArray = np.unique(np.array(nodes, dtype=np.int64)[relevant])
        return result


def journal(snapshot: Snapshot) -> ChangeJournal:
    return snapshot.extension(JOURNAL_KEY, ChangeJournal)
