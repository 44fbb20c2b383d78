"""The dashboard's node list: filters, search, sort and bands of utilization over
:class:`~policy.web.presenters.loadaware.NodeLoad` rows, and the histograms that summarize them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from policy.core.params import parse_count
from policy.web.presenters.charts import Bin
from policy.web.presenters.loadaware import RESOURCES, NodeLoad

SORT_KEYS = (
    "name",
    "zone",
    "pool",
    "pods",
    "cpu",
    "memory",
    "cpu_used",
    "memory_used",
    "cpu_load",
    "memory_load",
    "age",
)
STATES = {
    "filtered": "Filtered by LoadAware now",
    "over": "Above a threshold",
    "expired": "NodeMetric expired",
    "missing": "No NodeMetric",
    "cordoned": "Cordoned",
    "annotated": "Threshold from node annotation",
    "ok": "Schedulable, fresh metric",
}
PAGE_SIZES = (25, 50, 100, 200)
BAND_WIDTH = 10  # percent per histogram bar; the last bar holds everything above 100%


@dataclass(frozen=True)
class Band:
    """Nodes whose ``resource`` load (measured + estimated) is in [low, high) percent."""

    resource: str
    low: int
    high: int | None  # None: no upper bound

    @classmethod
    def parse(cls, text: str) -> Band | None:
        """``"cpu:60-70"`` or ``"memory:100-"``; None when malformed."""
        resource, _, span = text.partition(":")
        low, _, high = span.partition("-")
        lowest, highest = parse_count(low), parse_count(high) if high else None
        if resource not in RESOURCES or lowest is None or (high and highest is None):
            return None
        return cls(resource, lowest, highest)

    def __str__(self) -> str:
        return f"{self.resource}:{self.low}-{'' if self.high is None else self.high}"

    @property
    def label(self) -> str:
        upper = f"{self.high}%" if self.high is not None else "and more"
        joiner = "–" if self.high is not None else " "
        return f"{self.resource} load {self.low}%{joiner}{upper}"

    def contains(self, node: NodeLoad) -> bool:
        total = node.usage[self.resource].total
        if total is None:
            return False
        return total >= self.low and (self.high is None or total < self.high)


@dataclass(frozen=True)
class NodeQuery:
    q: str = ""
    zone: str = ""
    pool: str = ""
    state: str = ""
    reason: str = ""
    band: Band | None = None
    sort: str = "name"

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> NodeQuery:
        state = params.get("state", "")
        return cls(
            q=params.get("q", "").strip(),
            zone=params.get("zone", ""),
            pool=params.get("pool", ""),
            state=state if state in STATES else "",
            reason=params.get("reason", ""),
            band=Band.parse(params.get("band", "")),
            sort=params.get("sort", "name") or "name",
        )

    @property
    def active(self) -> bool:
        return bool(self.q or self.zone or self.pool or self.state or self.reason or self.band)


def _matches_state(node: NodeLoad, state: str) -> bool:
    if state == "filtered":
        return node.filtered is not None
    if state == "over":
        return node.over
    if state in ("expired", "missing"):
        return node.metric == state
    if state == "cordoned":
        return node.unschedulable
    if state == "annotated":
        return node.annotated
    if state == "ok":
        return node.state == "ok"
    return True


def select(nodes: Sequence[NodeLoad], query: NodeQuery) -> list[NodeLoad]:
    """The nodes ``query`` keeps, sorted as it asks."""
    needle = query.q.lower()
    kept = [
        node
        for node in nodes
        if (not needle or _found(node, needle))
        and (not query.zone or node.zone == query.zone)
        and (not query.pool or node.pool == query.pool)
        and (not query.state or _matches_state(node, query.state))
        and (not query.reason or node.filtered == query.reason)
        and (query.band is None or query.band.contains(node))
    ]
    return sort_nodes(kept, query.sort)


def _found(node: NodeLoad, needle: str) -> bool:
    """The search matches a node by any part of its name or of a label (``key=value``, so
    ``pool=gpu`` or ``eu-west-1a`` find nodes by their labels)."""
    return needle in node.name.lower() or any(needle in label.lower() for label in node.labels)


def sort_nodes(nodes: list[NodeLoad], key: str) -> list[NodeLoad]:
    """Sorted by one of :data:`SORT_KEYS` (``-key``: descending; unknown: by name). Nodes
    without a value (no NodeMetric, for usage columns) go last either way."""
    descending = key.startswith("-")
    name = key.lstrip("-")
    if name not in SORT_KEYS or name == "name":
        return sorted(nodes, key=lambda node: node.name, reverse=descending)
    valued = [node for node in nodes if getattr(node, name) is not None]
    missing = sorted((node for node in nodes if getattr(node, name) is None), key=_name)
    valued.sort(key=lambda node: (getattr(node, name), node.name), reverse=descending)
    return valued + missing


def _name(node: NodeLoad) -> str:
    return node.name


def facets(nodes: Sequence[NodeLoad]) -> dict[str, list[tuple[str, int]]]:
    """Zones and pools with their node counts, for the filter selects."""
    zones = Counter(node.zone for node in nodes if node.zone)
    pools = Counter(node.pool for node in nodes if node.pool)
    return {"zones": sorted(zones.items()), "pools": sorted(pools.items())}


def state_counts(nodes: Sequence[NodeLoad]) -> dict[str, int]:
    return {state: sum(1 for n in nodes if _matches_state(n, state)) for state in STATES}


def band_index(percent: int) -> int:
    """The histogram bar a load of ``percent`` falls in."""
    return min(max(percent, 0) // BAND_WIDTH, 100 // BAND_WIDTH)


def histogram(
    nodes: Sequence[NodeLoad], resource: str, href: Callable[[Band], str]
) -> tuple[list[Bin], int]:
    """Bars of :data:`BAND_WIDTH` percent of load (the last: above 100%), split into nodes within
    and above their own threshold; and how many nodes have no load to show."""
    count = 100 // BAND_WIDTH + 1
    ok = [0] * count
    over = [0] * count
    unmeasured = 0
    for node in nodes:
        usage = node.usage[resource]
        if usage.total is None:
            unmeasured += 1
            continue
        k = min(max(usage.total, 0) // BAND_WIDTH, count - 1)
        if usage.over:
            over[k] += 1
        else:
            ok[k] += 1
    bins = []
    for k in range(count):
        low = k * BAND_WIDTH
        band = Band(resource, low, None if k == count - 1 else low + BAND_WIDTH)
        axis = f"{low}%" if band.high is not None else f">{low}%"
        bins.append(Bin(band.label, ok[k], over[k], href(band), axis))
    return bins, unmeasured
