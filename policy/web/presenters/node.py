"""One node in detail: capacity and commitments, LoadAware's view with its arithmetic, NUMA
zones and the pods on it. Everything is read from the engine snapshot and the plugins' own
helpers (LoadAware's explanation, LimitAware's limit totals, the NRT parser)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from policy.web import format as fmt
from scoring import (
    LoadAwareScheduling,
    ObjectError,
    Pod,
    Snapshot,
    ThresholdProfile,
    node_load_detail,
    parse_topology,
    pod_limits,
)

PRIORITY_LABEL = "koordinator.sh/priority-class"


@dataclass(frozen=True)
class ResourceLine:
    name: str
    allocatable: str
    requested: str
    limits: str
    requested_percent: float | None
    limits_percent: float | None  # the limit/allocatable ratio

    @property
    def overcommitted(self) -> bool:
        return self.limits_percent is not None and self.limits_percent > 100


@dataclass(frozen=True)
class PodLine:
    key: str
    namespace: str
    name: str
    priority: str
    qos: str
    phase: str
    cpu_request: str
    cpu_limit: str
    memory_request: str
    memory_limit: str
    owner: str


@dataclass(frozen=True)
class ZoneLine:
    zone: str
    type: str
    numa: bool  # a NUMA cell the NodeResourceTopologyMatch plugin reads
    resources: list[dict[str, str]]


@dataclass(frozen=True)
class Thresholds:
    """The node's threshold profile: what non-prod, prod and aggregated checks use."""

    usage: dict[str, int]
    usage_source: str
    prod: dict[str, int]
    prod_source: str
    aggregated: str | None
    aggregated_source: str | None
    annotation: str | None
    annotation_error: str | None


@dataclass(frozen=True)
class NodeDetail:
    name: str
    labels: Mapping[str, str]
    taints: list[str]
    unschedulable: bool
    conditions: list[dict[str, str]]
    images: list[tuple[str, int]]  # (names, size in bytes), largest first
    resources: list[ResourceLine]
    loadaware: dict[str, Any]
    thresholds: Thresholds
    topology: dict[str, Any] | None
    pods: list[PodLine]
    problems: list[str] = field(default_factory=list)


def _thresholds(profile: ThresholdProfile, resources: tuple[str, ...]) -> Thresholds:
    def named(vector: tuple[int, ...]) -> dict[str, int]:
        return {name: v for name, v in zip(resources, vector, strict=True) if v}

    aggregated = None
    if profile.aggregated is not None:
        agg = profile.aggregated
        window = fmt.age(agg.duration / 1e9) if agg.duration else "the longest window"
        values = ", ".join(f"{k} {v}%" for k, v in named(agg.thresholds).items())
        aggregated = f"{values} on {agg.kind} over {window}"
    return Thresholds(
        usage=named(profile.usage),
        usage_source=profile.usage_source,
        prod=named(profile.prod),
        prod_source=profile.prod_source,
        aggregated=aggregated,
        aggregated_source=None if profile.aggregated is None else profile.aggregated.source,
        annotation=profile.annotation,
        annotation_error=profile.annotation_error,
    )


def _resources(snapshot: Snapshot, node: int) -> list[ResourceLine]:
    limits: dict[str, int] = {}
    for pod in snapshot.pods_on_node[node]:
        for name, amount in pod_limits(pod).raw.items():
            limits[name] = limits.get(name, 0) + amount
    lines = []
    for k, name in enumerate(snapshot.resources):
        allocatable = int(snapshot.allocatable[node, k])
        requested = int(snapshot.requested[node, k])
        limit = limits.get(name, 0) if name != "pods" else requested
        if not (allocatable or requested or limit):
            continue
        lines.append(
            ResourceLine(
                name=name,
                allocatable=fmt.amount(name, allocatable),
                requested=fmt.amount(name, requested),
                limits=fmt.amount(name, limit) if name != "pods" else "—",
                requested_percent=fmt.ratio(requested, allocatable),
                limits_percent=fmt.ratio(limit, allocatable) if name != "pods" else None,
            )
        )
    return lines


def _conditions(raw: Mapping[str, Any]) -> list[dict[str, str]]:
    """The node's status conditions as the kubelet reported them (text only: a malformed entry
    is shown as it is rather than failing the page)."""
    status = raw.get("status") if isinstance(raw, Mapping) else None
    items = status.get("conditions") if isinstance(status, Mapping) else None
    lines = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping):
            keys = ("type", "status", "reason", "message", "lastTransitionTime")
            lines.append({key: str(item.get(key) or "") for key in keys})
    return lines


def _owner(pod: Pod) -> str:
    owner = pod.controller
    return f"{owner.get('kind', '')}/{owner.get('name', '')}" if owner else ""


def pod_line(pod: Pod) -> PodLine:
    requests, limits = pod.requests, pod.limits
    priority = pod.labels.get(PRIORITY_LABEL, "")
    if not priority and pod.priority is not None:
        priority = str(pod.priority)
    return PodLine(
        key=pod.key,
        namespace=pod.namespace,
        name=pod.name,
        priority=priority or "—",
        qos=pod.qos_class,
        phase=pod.phase or "—",
        cpu_request=fmt.cores(requests.get("cpu")),
        cpu_limit=fmt.cores(limits.get("cpu")),
        memory_request=fmt.binary(requests.get("memory")),
        memory_limit=fmt.binary(limits.get("memory")),
        owner=_owner(pod),
    )


def _topology(obj: Mapping[str, Any] | None, problems: list[str]) -> dict[str, Any] | None:
    if obj is None:
        return None
    try:
        parsed = parse_topology(obj)
    except ObjectError as exc:
        problems.append(str(exc))
        return None
    cells = {cell.zone for cell in parsed.cells}
    zones = []
    for zone in obj.get("zones") or []:
        if not isinstance(zone, Mapping):
            continue
        name = str(zone.get("name", ""))
        zones.append(
            ZoneLine(
                zone=name,
                type=str(zone.get("type", "")),
                numa=name in cells,
                resources=[
                    {
                        "name": str(r.get("name", "")),
                        "capacity": str(r.get("capacity", "—")),
                        "allocatable": str(r.get("allocatable", "—")),
                        "available": str(r.get("available", "—")),
                    }
                    for r in zone.get("resources") or []
                    if isinstance(r, Mapping)
                ],
            )
        )
    return {
        "policy": parsed.manager.policy,
        "scope": parsed.manager.scope,
        "source": parsed.manager.source,
        "api_version": parsed.api_version,
        "zones": zones,
    }


def node_detail(
    snapshot: Snapshot, plugin: LoadAwareScheduling, now: datetime, name: str
) -> NodeDetail | None:
    """The node named ``name`` (None if the snapshot has no such node)."""
    index = snapshot.index.get(name)
    if index is None:
        return None
    node = snapshot.nodes[index]
    load = node_load_detail(plugin, snapshot, now, index)
    problems: list[str] = []
    pods = sorted(snapshot.pods_on_node[index], key=lambda p: (p.namespace, p.name))
    return NodeDetail(
        name=node.name,
        labels=dict(sorted(node.labels.items())),
        taints=[f"{t.key}{'=' + t.value if t.value else ''}:{t.effect}" for t in node.taints],
        unschedulable=node.unschedulable,
        conditions=_conditions(node.raw),
        images=sorted(
            ((", ".join(image.names), image.size_bytes) for image in node.images),
            key=lambda item: (-item[1], item[0]),
        ),
        resources=_resources(snapshot, index),
        loadaware=load.explanation,
        thresholds=_thresholds(load.thresholds, load.resources),
        topology=_topology(snapshot.topologies.get(node.name), problems),
        pods=[pod_line(pod) for pod in pods],
        problems=problems,
    )


def node_detail_from_json(data: Mapping[str, Any]) -> NodeDetail:
    """A :class:`NodeDetail` from its JSON (``dataclasses.asdict``, as the engine tier answers
    it)."""
    return NodeDetail(
        **{
            **data,
            "images": [tuple(image) for image in data["images"]],
            "resources": [ResourceLine(**line) for line in data["resources"]],
            "thresholds": Thresholds(**data["thresholds"]),
            "pods": [PodLine(**line) for line in data["pods"]],
            "topology": _topology_from_json(data["topology"]),
        }
    )


def _topology_from_json(data: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if data is None:
        return None
    return {**data, "zones": [ZoneLine(**zone) for zone in data["zones"]]}
