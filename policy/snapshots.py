"""Read-side summaries of a cluster snapshot, for the dashboard and the API.

Objects are read with the engine's own parsers (``scoring.objects``, ``scoring.quantity``), so
the dashboard and the engine agree on what a quantity or a node's allocatable is. An object
that cannot be read is counted in ``problems`` instead of failing the page.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from scoring.errors import InputError
from scoring.objects import parse_node
from scoring.quantity import QuantityError, resource_amount
from scoring.timeutil import parse_time

# Koordinator LoadAwareScheduling's default nodeMetricExpirationSeconds: an older NodeMetric
# makes the plugin filter the node out (see shared notes on LoadAware).
NODE_METRIC_EXPIRY_SECONDS = 180
HOT_CPU_PERCENT = 65.0  # LoadAware's default cpu usage threshold

SORT_KEYS = ("name", "cpu", "memory", "cpu_used", "memory_used", "pods")

Obj = Mapping[str, Any]


@dataclass(frozen=True)
class NodeRow:
    """One node's line in the dashboard table. Percentages are of allocatable."""

    name: str
    zone: str
    pool: str
    unschedulable: bool
    cpu: int  # allocatable millicores
    memory: int  # allocatable bytes
    pods: int
    metric: str  # fresh | expired | missing
    cpu_used: float | None = None
    memory_used: float | None = None

    @property
    def cpu_cores(self) -> float:
        return round(self.cpu / 1000, 2)

    @property
    def memory_gib(self) -> float:
        return round(self.memory / 2**30, 1)

    @property
    def hot(self) -> bool:
        return self.cpu_used is not None and self.cpu_used > HOT_CPU_PERCENT


@dataclass(frozen=True)
class SnapshotSummary:
    taken_at: datetime
    nodes: int
    pods_bound: int
    pods_pending: int
    metrics: Mapping[str, int]  # fresh / expired / missing
    rows: list[NodeRow] = field(repr=False)
    problems: list[str] = field(default_factory=list)

    @property
    def hot_nodes(self) -> int:
        return sum(1 for row in self.rows if row.hot)


def _kind(obj: Obj) -> str:
    return str(obj.get("kind", "")) if isinstance(obj, Mapping) else ""


def _section(obj: Obj, key: str) -> Obj:
    """``obj[key]`` if it is an object, else empty: a malformed object must not crash a page."""
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def count_objects(objects: Iterable[Obj]) -> dict[str, int]:
    """Counts stored on ``ClusterSnapshot`` (field name → count)."""
    counts = Counter[str]()
    for obj in objects:
        kind = _kind(obj)
        if kind == "Pod":
            counts[_pod_state(obj) or "other_pods"] += 1
        else:
            counts[kind] += 1
    return {
        "node_count": counts["Node"],
        "pod_count": counts["bound"],
        "pending_pod_count": counts["pending"],
        "node_metric_count": counts["NodeMetric"],
        "topology_count": counts["NodeResourceTopology"],
    }


def _pod_state(pod: Obj) -> str | None:
    """``bound`` (on a node, not finished), ``pending`` (waiting for one) or None."""
    phase = _section(pod, "status").get("phase", "Pending")
    if phase in ("Succeeded", "Failed"):
        return None
    return "bound" if _section(pod, "spec").get("nodeName") else "pending"


def summarize(
    objects: Iterable[Obj],
    taken_at: datetime,
    *,
    expiry_seconds: int = NODE_METRIC_EXPIRY_SECONDS,
) -> SnapshotSummary:
    """Summarize a snapshot as of ``taken_at``: NodeMetric freshness is judged at that time."""
    by_kind: dict[str, list[Obj]] = {}
    for obj in objects:
        by_kind.setdefault(_kind(obj), []).append(obj)
    problems: list[str] = []
    pods_on = Counter[str]()
    states = Counter[str]()
    for pod in by_kind.get("Pod", []):
        state = _pod_state(pod)
        states[state or "done"] += 1
        if state == "bound":
            pods_on[str(_section(pod, "spec")["nodeName"])] += 1
    usage = {
        str(_section(metric, "metadata").get("name")): _metric_usage(
            metric, taken_at, expiry_seconds, problems
        )
        for metric in by_kind.get("NodeMetric", [])
    }
    rows = []
    for obj in by_kind.get("Node", []):
        row = _node_row(obj, pods_on, usage, problems)
        if row is not None:
            rows.append(row)
    freshness = Counter(row.metric for row in rows)
    return SnapshotSummary(
        taken_at=taken_at,
        nodes=len(rows),
        pods_bound=states["bound"],
        pods_pending=states["pending"],
        metrics={key: freshness[key] for key in ("fresh", "expired", "missing")},
        rows=rows,
        problems=problems,
    )


def _metric_usage(
    metric: Obj, taken_at: datetime, expiry_seconds: int, problems: list[str]
) -> tuple[str, dict[str, int]]:
    """(freshness, {cpu: millicores, memory: bytes}) of one NodeMetric."""
    name = _section(metric, "metadata").get("name")
    status = _section(metric, "status")
    try:
        updated = parse_time(status["updateTime"]) if status.get("updateTime") else None
        raw = _section(_section(_section(status, "nodeMetric"), "nodeUsage"), "resources")
        amounts = {res: resource_amount(res, raw[res]) for res in ("cpu", "memory") if res in raw}
    except (ValueError, QuantityError, TypeError) as exc:
        problems.append(f"NodeMetric {name}: {exc}")
        return "missing", {}
    fresh = updated is not None and (taken_at - updated).total_seconds() <= expiry_seconds
    return ("fresh" if fresh else "expired"), amounts


def _node_row(
    obj: Obj,
    pods_on: Mapping[str, int],
    usage: Mapping[str, tuple[str, dict[str, int]]],
    problems: list[str],
) -> NodeRow | None:
    try:
        node = parse_node(obj)
    except InputError as exc:
        problems.append(str(exc))
        return None
    cpu = node.amounts.get("cpu", 0)
    memory = node.amounts.get("memory", 0)
    freshness, used = usage.get(node.name, ("missing", {}))
    return NodeRow(
        name=node.name,
        zone=node.labels.get("topology.kubernetes.io/zone", ""),
        pool=node.labels.get("pool", ""),
        unschedulable=node.unschedulable,
        cpu=cpu,
        memory=memory,
        pods=pods_on.get(node.name, 0),
        metric=freshness,
        cpu_used=_percent(used.get("cpu"), cpu),
        memory_used=_percent(used.get("memory"), memory),
    )


def _percent(used: int | None, total: int) -> float | None:
    if used is None or total <= 0:
        return None
    return round(100 * used / total, 1)


def sort_rows(rows: list[NodeRow], key: str) -> list[NodeRow]:
    """Rows sorted by one of :data:`SORT_KEYS`, ``-key`` for descending; unknown keys: by name.

    Rows without a measurement sort last either way.
    """
    descending = key.startswith("-")
    name = key.lstrip("-")
    if name not in SORT_KEYS or name == "name":
        return sorted(rows, key=lambda row: row.name, reverse=descending)
    measured = [row for row in rows if getattr(row, name) is not None]
    unmeasured = sorted((row for row in rows if getattr(row, name) is None), key=lambda r: r.name)
    measured.sort(key=lambda row: (getattr(row, name), row.name), reverse=descending)
    return measured + unmeasured
