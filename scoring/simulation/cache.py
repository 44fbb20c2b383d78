"""The equivalence-class cache: Filter verdicts and raw Scores per (class, plugin) over nodes.

The design follows upstream's equivalence-class cache (community design-proposals
scheduling/scheduler-equivalence-class.md, removed from kube-scheduler in 1.14) adapted to a
vectorized, single-threaded engine:

- one entry per (pod class, plugin) holds the plugin's verdict (or raw score) on every node;
- an entry is invalidated *per node and per plugin*: a change on node ``i`` of a kind the plugin
  declares in ``Plugin.depends_on`` makes that plugin stale on ``i`` only (a placement or
  removal invalidates the resource plugins, a Node change every node-reading plugin, a
  NodeMetric change LoadAwareScheduling, an NRT change NodeResourceTopologyMatch; a new "now"
  invalidates the plugins depending on the clock; a new configuration is a new engine, hence a
  new cache);
- stale nodes are recomputed with ``Plugin.filter_nodes`` / ``Plugin.score`` on just those nodes.

Upstream removed its cache because a global lock on the hot path made it slower than running
the predicates (kubernetes#63784, #71013). Here there is no lock (one simulation runs on one
thread) and a lookup is a dictionary access plus a short read of the change journal.

PreFilter and PreScore always run (they are per-pod and cheap, and they set the cycle state the
plugins read); plugins whose ``depends_on`` is None are never cached. Normalization always runs
over the current feasible set. Results are the same values the uncached engine computes; the
explanation details some plugins attach during a full Filter are not recorded on cache hits, so
explain a decision by evaluating it again without the cache.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt

from scoring.framework import CLOCK, Cycle, FilterResult, Plugin, Status
from scoring.objects import Pod
from scoring.simulation.equivalence import ClassKey, equivalence_key
from scoring.simulation.journal import ChangeJournal, journal, kind_mask
from scoring.snapshot import BoolArray, IntArray, Snapshot

DEFAULT_MAX_CLASSES = 256
# (plugin, extension point) pairs cheaper to recompute than to look up, measured with
# ``python -m benchmarks.simulation --per-plugin`` (docs/benchmarks.md): NodePorts' Filter is a
# few vector operations over used host ports (and usually skipped by its PreFilter); NodeAffinity's
# Score only gathers the masks its PreScore built.
NOT_WORTH_CACHING: frozenset[tuple[str, str]] = frozenset(
    {("NodePorts", "filter"), ("NodeAffinity", "score")}
)


@dataclass
class CacheStats:
    """How often results were reused, and how many nodes had to be recomputed."""

    filter_hits: int = 0  # (class, plugin) verdicts reused, possibly after patching a few nodes
    filter_misses: int = 0  # verdicts computed on every node
    filter_nodes_recomputed: int = 0
    score_hits: int = 0
    score_misses: int = 0
    score_nodes_recomputed: int = 0
    evictions: int = 0

    def to_dict(self) -> dict[str, int]:
        """JSON form, camelCase like the rest of the output."""
        return {_camel(name): value for name, value in self.__dict__.items()}


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


class _Verdict(FilterResult):
    """A cached verdict: ``passed`` is computed when the verdict changes, not on every use."""

    def __init__(
        self, status_ids: npt.NDArray[np.int32], statuses: list[Status], passed: BoolArray
    ) -> None:
        super().__init__(status_ids, statuses)
        self._passed = passed

    @property
    def passed(self) -> BoolArray:
        return self._passed


class _FilterEntry:
    """One plugin's verdict on every node for one class (copy-on-write: results handed out
    earlier never change)."""

    __slots__ = ("index", "passed", "position", "status_ids", "statuses")

    def __init__(self, result: FilterResult, position: int) -> None:
        self.status_ids = result.status_ids
        self.passed = result.passed
        self.statuses = list(result.statuses)
        self.index: dict[Status, int] = {}
        for k, status in enumerate(self.statuses):
            self.index.setdefault(status, k)
        self.position = position

    def _id(self, status: Status) -> int:
        k = self.index.get(status)
        if k is None:
            k = self.index[status] = len(self.statuses)
            self.statuses = [*self.statuses, status]
        return k

    def patch(self, nodes: IntArray, result: FilterResult) -> None:
        mapping = np.array([*(self._id(s) for s in result.statuses), -1], dtype=np.int32)
        ids = self.status_ids.copy()
        ids[nodes] = mapping[result.status_ids]
        passed = self.passed.copy()
        passed[nodes] = result.passed
        self.status_ids, self.passed = ids, passed

    def result(self) -> FilterResult:
        return _Verdict(self.status_ids, self.statuses, self.passed)


class _ScoreEntry:
    """One plugin's raw scores for one class; ``valid`` marks nodes whose value is current."""

    __slots__ = ("position", "raw", "valid")

    def __init__(self, size: int, position: int) -> None:
        self.raw: IntArray = np.zeros(size, dtype=np.int64)
        self.valid: BoolArray = np.zeros(size, dtype=bool)
        self.position = position


@dataclass
class _ClassEntry:
    filters: dict[Plugin, _FilterEntry] = field(default_factory=dict)
    scores: dict[Plugin, _ScoreEntry] = field(default_factory=dict)


class EquivalenceCache:
    """Filter and score results per equivalence class, for one snapshot at a time.

    ``bind(pod, snapshot, now)`` returns the :class:`scoring.engine.ResultCache` to pass to
    ``Framework.evaluate``. A different snapshot starts the cache afresh. Classes beyond
    ``max_classes`` are evicted least recently used first (each costs ~40 bytes per node and
    plugin).
    """

    def __init__(
        self,
        *,
        max_classes: int = DEFAULT_MAX_CLASSES,
        uncached: frozenset[tuple[str, str]] = NOT_WORTH_CACHING,
    ) -> None:
        self.max_classes = max_classes
        self.uncached = uncached
        self.stats = CacheStats()
        self._classes: OrderedDict[ClassKey, _ClassEntry] = OrderedDict()
        self._snapshot: Snapshot | None = None
        self._journal: ChangeJournal | None = None
        self._now: datetime | None = None
        self._masks: dict[Plugin, int] = {}

    def clear(self) -> None:
        """Forget every result (e.g. after changing a plugin's configuration in place)."""
        self._classes.clear()

    def bind(
        self, pod: Pod, snapshot: Snapshot, now: datetime, key: ClassKey | None = None
    ) -> ClassResults:
        """The cached results of ``pod``'s class (``key`` if already computed)."""
        if snapshot is not self._snapshot or self._journal is None:
            self._classes.clear()
            self._snapshot, self._journal = snapshot, journal(snapshot)
        if now != self._now:
            self._drop_clock_dependent()
            self._now = now
        key = equivalence_key(pod) if key is None else key
        entry = self._classes.get(key)
        if entry is None:
            entry = self._classes[key] = _ClassEntry()
            if len(self._classes) > self.max_classes:
                self._classes.popitem(last=False)
                self.stats.evictions += 1
        else:
            self._classes.move_to_end(key)
        return ClassResults(self, entry, self._journal)

    def cached(self, plugin: Plugin, point: str) -> bool:
        """Whether ``plugin``'s results at ``point`` ("filter", "score") are worth caching."""
        return plugin.depends_on is not None and (plugin.name, point) not in self.uncached

    def mask(self, plugin: Plugin) -> int:
        mask = self._masks.get(plugin)
        if mask is None:
            mask = self._masks[plugin] = kind_mask(plugin.depends_on or ())
        return mask

    def _drop_clock_dependent(self) -> None:
        for entry in self._classes.values():
            for table in (entry.filters, entry.scores):
                for plugin in [p for p in table if CLOCK in (p.depends_on or ())]:
                    del table[plugin]


class ClassResults:
    """A :class:`scoring.engine.ResultCache` for one pod: its class's entries, brought up to
    date against the change journal as the engine asks for them."""

    def __init__(self, cache: EquivalenceCache, entry: _ClassEntry, log: ChangeJournal) -> None:
        self._cache = cache
        self._entry = entry
        self._journal = log
        self._stats = cache.stats
        self._feasible: IntArray | None = None  # the last feasible array seen, and its mask
        self._feasible_mask: BoolArray = np.zeros(0, dtype=bool)

    def filter(self, plugin: Plugin, cycle: Cycle) -> FilterResult:
        if not self._cache.cached(plugin, "filter"):
            return plugin.filter(cycle)
        position = len(self._journal)
        entry = self._entry.filters.get(plugin)
        if entry is None:
            result = plugin.filter(cycle)
            self._entry.filters[plugin] = _FilterEntry(result, position)
            self._stats.filter_misses += 1
            return result
        if entry.position != position:
            stale = self._journal.changed_since(entry.position, self._cache.mask(plugin))
            if len(stale):
                entry.patch(stale, plugin.filter_nodes(cycle, stale))
                self._stats.filter_nodes_recomputed += len(stale)
            entry.position = position
        self._stats.filter_hits += 1
        return entry.result()

    def score(self, plugin: Plugin, cycle: Cycle, feasible: IntArray) -> IntArray:
        if not self._cache.cached(plugin, "score"):
            return plugin.score(cycle, feasible)
        position = len(self._journal)
        entry = self._entry.scores.get(plugin)
        if entry is None:
            entry = self._entry.scores[plugin] = _ScoreEntry(len(cycle.snapshot), position)
            self._stats.score_misses += 1
        else:
            self._stats.score_hits += 1
            if entry.position != position:
                changed = self._journal.changed_since(entry.position, self._cache.mask(plugin))
                entry.valid[changed] = False
                entry.position = position
        stale = self._mask_of(feasible, len(entry.valid)) & ~entry.valid
        if stale.any():
            missing: IntArray = np.flatnonzero(stale)
            entry.raw[missing] = plugin.score(cycle, missing)
            entry.valid[missing] = True
            self._stats.score_nodes_recomputed += len(missing)
        result: IntArray = entry.raw[feasible]
        return result

    def _mask_of(self, feasible: IntArray, size: int) -> BoolArray:
        """``feasible`` as a node mask; every score plugin of a cycle gets the same array."""
        if feasible is not self._feasible:
            self._feasible_mask = np.zeros(size, dtype=bool)
            self._feasible_mask[feasible] = True
            self._feasible = feasible
        return self._feasible_mask
