"""Counts of a stored cluster snapshot: the numbers stored with it, and what the dashboard
can still say of a snapshot the engine cannot read.

Nodes and pods are read with the engine's own parsers, so both agree on what is readable; an
object that is not is listed in ``problems`` instead of failing the page. Utilization and NodeMetric
freshness are LoadAware's to judge, with the configured args (``policy.web.presenters.loadaware``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scoring import InputError, parse_node, parse_pod

Obj = Mapping[str, Any]


@dataclass(frozen=True)
class SnapshotSummary:
    nodes: int  # readable nodes
    pods_bound: int
    pods_pending: int
    problems: list[str] = field(default_factory=list)


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


def summarize(objects: Iterable[Obj]) -> SnapshotSummary:
    """What can still be said of a snapshot the engine cannot read: how many nodes parse, how
    many pods are bound or pending, and each Node or Pod the engine refuses, with its reason
    (NodeMetrics and topologies are judged per node by their plugins, not refused)."""
    problems: list[str] = []
    nodes = 0
    states = Counter[str]()
    for obj in objects:
        kind = _kind(obj)
        parse = _PARSERS.get(kind)
        if parse is None:
            continue
        try:
            parse(obj)
        except InputError as exc:
            problems.append(str(exc))
            continue
        if kind == "Node":
            nodes += 1
        else:
            states[_pod_state(obj) or "done"] += 1
    return SnapshotSummary(nodes, states["bound"], states["pending"], problems)


_PARSERS: dict[str, Callable[[Obj], object]] = {"Node": parse_node, "Pod": parse_pod}


def scheduling_failures(objects: Iterable[Obj]) -> dict[str, str]:
    """``namespace/name`` of each pod with a FailedScheduling event -> the newest one's message
    (what the cluster's scheduler said of it). Kept with a stored snapshot, so the pods' pages
    and the pending pods' decisions need not read every object again."""
    newest: dict[str, tuple[str, str]] = {}
    for obj in objects:
        if _kind(obj) != "Event" or obj.get("reason") != "FailedScheduling":
            continue
        involved = _section(obj, "involvedObject")
        if involved.get("kind") != "Pod":
            continue
        key = f"{involved.get('namespace', 'default')}/{involved.get('name', '')}"
        when = str(obj.get("lastTimestamp") or obj.get("eventTime") or "")
        if key not in newest or when >= newest[key][0]:
            newest[key] = (when, str(obj.get("message", "")))
    return {key: message for key, (_, message) in newest.items()}
