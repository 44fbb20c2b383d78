"""A refresh's changes sorted by what they change in a snapshot (pure; parsed once).

A refresh reports objects put (added or replaced) and references deleted, as the stored snapshot
chains hold them (``kind, namespace, name``). :func:`plan_refresh` turns them into the parsed
nodes and pods, the NodeMetric and NodeResourceTopology objects by node name, and the cluster
objects some plugins read, which ``Snapshot.apply_changes`` then applies. A reference both
deleted and put in one refresh is a replacement: the put wins, as when the chain is replayed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoring.clusterobjects import KINDS as CLUSTER_OBJECT_KINDS
from scoring.objects import Node, Pod, parse_cluster_pod, parse_node

NODE_METRIC = ("slo.koordinator.sh", "NodeMetric")
NODE_RESOURCE_TOPOLOGY = ("topology.node.k8s.io", "NodeResourceTopology")
# Deleted references carry a kind, not an apiVersion: the kinds read, by name.
_GROUP_OF_KIND = {
    kind: (group, kind)
    for group, kind in (("", "Node"), ("", "Pod"), NODE_METRIC, NODE_RESOURCE_TOPOLOGY)
}
_GROUP_OF_KIND.update({kind: (group, kind) for group, kind in CLUSTER_OBJECT_KINDS})

PodKey = tuple[str, str]  # namespace, name
ClusterObjectRef = tuple[tuple[str, str], str, str]  # (group, kind), namespace, name


def api_group(kind: str, api_version: str) -> tuple[str, str]:
    """``(group, kind)`` of an object from its apiVersion (``v1`` is the core group, "")."""
    return (api_version.split("/")[0] if "/" in api_version else "", kind)


def pod_key(namespace: str, name: str) -> PodKey:
    """How pods are matched across refreshes (a missing namespace reads as ``default``)."""
    return (namespace or "default", name)


@dataclass
class RefreshPlan:
    """What one refresh does to a snapshot, by kind (deletions before puts)."""

    nodes: list[Node] = field(default_factory=list)
    deleted_nodes: list[str] = field(default_factory=list)
    pods: list[Pod] = field(default_factory=list)
    deleted_pods: list[PodKey] = field(default_factory=list)
    node_metrics: dict[str, Mapping[str, Any] | None] = field(default_factory=dict)
    topologies: dict[str, Mapping[str, Any] | None] = field(default_factory=dict)
    cluster_objects: list[tuple[tuple[str, str], Mapping[str, Any]]] = field(default_factory=list)
    deleted_cluster_objects: list[ClusterObjectRef] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # objects of kinds the engine does not read


def plan_refresh(put: Iterable[Mapping[str, Any]], delete: Iterable[Sequence[str]]) -> RefreshPlan:
    """Sort ``delete`` references (kind, namespace, name) and ``put`` objects by kind."""
    plan = RefreshPlan()
    for ref in delete:
        kind, namespace, name = (str(part) for part in ref)
        _plan_delete(plan, kind, namespace, name)
    for obj in put:
        meta = obj.get("metadata") or {}
        kind, name = str(obj.get("kind", "")), str(meta.get("name") or "")
        _plan_put(plan, api_group(kind, str(obj.get("apiVersion", ""))), name, obj)
    return plan


def _plan_put(plan: RefreshPlan, group: tuple[str, str], name: str, obj: Mapping[str, Any]) -> None:
    if group == ("", "Node"):
        plan.nodes.append(parse_node(obj))
    elif group == ("", "Pod"):
        plan.pods.append(parse_cluster_pod(obj))
    elif group == NODE_METRIC:
        plan.node_metrics[name] = obj
    elif group == NODE_RESOURCE_TOPOLOGY:
        plan.topologies[name] = obj
    elif group in CLUSTER_OBJECT_KINDS:
        plan.cluster_objects.append((group, obj))
    else:
        plan.ignored.append(f"{obj.get('apiVersion')} {group[1]} {name!r}")


def _plan_delete(plan: RefreshPlan, kind: str, namespace: str, name: str) -> None:
    group = _GROUP_OF_KIND.get(kind)
    if group == ("", "Node"):
        plan.deleted_nodes.append(name)
    elif group == ("", "Pod"):
        plan.deleted_pods.append(pod_key(namespace, name))
    elif group == NODE_METRIC:
        plan.node_metrics[name] = None
    elif group == NODE_RESOURCE_TOPOLOGY:
        plan.topologies[name] = None
    elif group is not None:
        plan.deleted_cluster_objects.append((group, namespace, name))
