"""The plugin contract: statuses, per-node filter results, and the scheduling cycle.

Mirrors kube-scheduler's framework (pkg/scheduler/framework/interface.go) with one change of
shape: every extension point works on all nodes at once (numpy arrays indexed by node), so a
plugin is a handful of vectorized operations instead of a per-node callback.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import IntEnum
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from scoring.columnar.values import Plain, Table, Values
from scoring.goint import quo_array
from scoring.objects import Pod
from scoring.snapshot import BoolArray, IntArray, Snapshot

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
# A ``Plugin.depends_on`` kind: the result depends on the cycle's "now" (not a node event).
CLOCK = "clock"


class Code(IntEnum):
    """``framework.Code`` values the engine reports."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    SKIP = 5

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.SKIP: "Skip",
}


@dataclass(frozen=True)
class Status:
    """A plugin verdict: a code and the upstream reason strings."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.code == Code.SUCCESS

    @property
    def message(self) -> str | None:
        """``Status.Message()``: the reasons joined by ", " (None on success)."""
        return ", ".join(self.reasons) if self.reasons or not self.ok else None


SUCCESS = Status()
SKIP = Status(Code.SKIP)


class PluginError(Exception):
    """An extension point returned an Error status; kube-scheduler aborts the pod's cycle."""


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons)


def error(*reasons: str) -> Status:
    return Status(Code.ERROR, reasons)


@dataclass
class FilterResult:
    """One filter plugin's verdict on every node.

    ``status_ids[i]`` indexes ``statuses`` for node ``i``; -1 means Success. Plugins usually build
    it with :meth:`from_masks`, one boolean mask per distinct failure.
    """

    status_ids: npt.NDArray[np.int32]
    statuses: list[Status] = field(default_factory=list)

    @classmethod
    def success(cls, n: int) -> FilterResult:
        return cls(np.full(n, -1, dtype=np.int32))

    @classmethod
    def uniform(cls, n: int, status: Status) -> FilterResult:
        if status.ok:
            return cls.success(n)
        return cls(np.zeros(n, dtype=np.int32), [status])

    @classmethod
    def from_masks(cls, n: int, failures: Iterable[tuple[BoolArray, Status]]) -> FilterResult:
        """Earlier masks win: a node failing several checks reports the first, as Go returns."""
        result = cls.success(n)
        for mask, status in failures:
            fresh = mask & (result.status_ids < 0)
            if fresh.any():
                result.status_ids[fresh] = len(result.statuses)
                result.statuses.append(status)
        return result

    @classmethod
    def from_statuses(cls, statuses: Iterable[Status]) -> FilterResult:
        """Build from one status per node (for plugins that cannot vectorize)."""
        ids: list[int] = []
        distinct: dict[Status, int] = {}
        for status in statuses:
            ids.append(-1 if status.ok else distinct.setdefault(status, len(distinct)))
        return cls(np.array(ids, dtype=np.int32), list(distinct))

    @property
    def passed(self) -> BoolArray:
        result: BoolArray = self.status_ids < 0
        return result

    def status(self, node: int) -> Status:
        index = int(self.status_ids[node])
        return SUCCESS if index < 0 else self.statuses[index]


class Cycle:
    """One pod's scheduling cycle against one snapshot (kube-scheduler's ``CycleState``)."""

    def __init__(self, pod: Pod, snapshot: Snapshot, now: datetime) -> None:
        self.pod = pod
        self.snapshot = snapshot
        self.now = now
        self.state: dict[str, Any] = {}
        # Computed eagerly: it may add resource columns the filters must then see.
        self.request: IntArray = snapshot.request_vector(pod.requests)


class Plugin:
    """Base class of engine plugins. Override the extension points the plugin implements.

    ``args`` is the plugin's defaulted, validated args in v1 JSON form. Plugins must be stateless
    across cycles: per-pod data lives in ``cycle.state``, per-cluster data in snapshot extensions.
    """

    name: ClassVar[str]
    # Extension points (v1 config names) the engine models for this plugin.
    points: ClassVar[frozenset[str]] = frozenset()
    # Whether the plugin has NormalizeScore (``ScoreExtensions() != nil``).
    normalizes: ClassVar[bool] = False
    # Which per-node changes (``scoring.snapshot`` event kinds, plus ``CLOCK`` for "now") can
    # change this plugin's Filter/Score result on the node they happen on, and only there.
    # Equivalence-class caches recompute a plugin on a node only after such a change. None: not
    # known to be node-local, so results are never cached.
    depends_on: ClassVar[frozenset[str] | None] = None

    def __init__(self, args: Mapping[str, Any]) -> None:
        self.args = args

    def pre_filter(self, cycle: Cycle) -> Status:
        return SUCCESS

    def filter(self, cycle: Cycle) -> FilterResult:
        return FilterResult.success(len(cycle.snapshot))

    def filter_nodes(self, cycle: Cycle, nodes: IntArray) -> FilterResult:
        """Filter on the ``nodes`` indices only; the result is aligned with ``nodes``.

        Caches call this for the few nodes whose cached verdict went stale. The default runs
        :meth:`filter` on every node and keeps the requested ones (always correct); plugins with
        per-node work override it to compute only those nodes.
        """
        result = self.filter(cycle)
        return FilterResult(result.status_ids[nodes], result.statuses)

    def pre_score(self, cycle: Cycle, feasible: IntArray) -> Status:
        return SUCCESS

    def score(self, cycle: Cycle, feasible: IntArray) -> IntArray:
        """Raw scores of the ``feasible`` node indices (same order)."""
        return np.zeros(len(feasible), dtype=np.int64)

    def normalize(self, cycle: Cycle, scores: IntArray) -> IntArray:
        return scores

    def reserve(self, cycle: Cycle, node: int) -> Status:
        """Plugin-local Reserve. Resource accounting is done by ``Snapshot.assume_pod``."""
        return SUCCESS

    def unreserve(self, cycle: Cycle, node: int) -> None:
        return None

    #: Cycle-state keys without which :meth:`explain` answers None on every node (empty: ask).
    explained_by: tuple[str, ...] = ()

    def explain(self, cycle: Cycle, node: int) -> Mapping[str, Any] | None:
        """Plugin-specific detail behind this node's verdict, for people (JSON-able)."""
        return None

    def explain_columns(self, cycle: Cycle, nodes: IntArray) -> Values:
        """:meth:`explain` of each of ``nodes`` as a column (:mod:`scoring.columnar.values`):
        a dict, or None where there is no detail. Plugins with details on every node override
        it to build the column from their arrays; this one asks node by node, unless none of
        the cycle state :attr:`explained_by` names is there (the pod gave the plugin nothing
        to do: thousands of calls that would all answer None)."""
        if self.explained_by and all(cycle.state.get(k) is None for k in self.explained_by):
            return Table.constant(None, len(nodes))
        details = []
        for node in nodes.tolist():
            detail = self.explain(cycle, node)
            details.append(dict(detail) if detail else None)
        return Plain(details)


def default_normalize(scores: IntArray, *, reverse: bool) -> IntArray:
    """``helper.DefaultNormalizeScore`` (pkg/scheduler/framework/plugins/helper/normalize_score.go).

    Scales so the highest score becomes 100 (integer math); ``reverse`` flips to 100 - score.
    When every score is 0, reverse gives every node 100 and non-reverse leaves them at 0.
    """
    if len(scores) == 0:
        return scores
    highest = max(0, int(scores.max()))
    if highest == 0:
        return np.full_like(scores, MAX_NODE_SCORE) if reverse else scores
    scaled = quo_array(MAX_NODE_SCORE * scores, highest)  # Go truncates negative scores toward 0
    return MAX_NODE_SCORE - scaled if reverse else scaled
