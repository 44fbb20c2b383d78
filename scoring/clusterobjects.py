"""Cluster objects other than nodes and pods that scheduling plugins read.

- Services, ReplicationControllers, ReplicaSets and StatefulSets: PodTopologySpread's system
  default constraints spread a pod among the pods its Services and controller select
  (``helper.DefaultSelector``, pkg/scheduler/framework/plugins/helper/spread.go). kube-scheduler
  reads them from informers; the engine reads them from the snapshot's input.
- Namespaces: InterPodAffinity's ``namespaceSelector`` selects namespaces by their labels.

Only the fields those rules read are kept; the objects are never modified.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SERVICE = ("", "Service")
REPLICATION_CONTROLLER = ("", "ReplicationController")
REPLICA_SET = ("apps", "ReplicaSet")
STATEFUL_SET = ("apps", "StatefulSet")
NAMESPACE = ("", "Namespace")
KINDS = frozenset({SERVICE, REPLICATION_CONTROLLER, REPLICA_SET, STATEFUL_SET, NAMESPACE})


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _string_map(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, Mapping) else {}


@dataclass
class ClusterObjects:
    """The objects above, indexed the way the scheduler's listers look them up."""

    # (namespace, name) -> spec.selector or None, per Service in input order
    services: dict[tuple[str, str], dict[str, str] | None] = field(default_factory=dict)
    # (namespace, name) -> spec.selector (a label map)
    replication_controllers: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    # (namespace, name) -> spec.selector (a metav1.LabelSelector, possibly None)
    replica_sets: dict[tuple[str, str], Any] = field(default_factory=dict)
    stateful_sets: dict[tuple[str, str], Any] = field(default_factory=dict)
    # namespace name -> labels
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)

    def add(self, group: tuple[str, str], obj: Mapping[str, Any]) -> None:
        meta = _meta(obj)
        key = (str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
        selector = _spec(obj).get("selector")
        if group == SERVICE:
            self.services[key] = None if selector is None else _string_map(selector)
        elif group == REPLICATION_CONTROLLER:
            self.replication_controllers[key] = _string_map(selector)
        elif group == REPLICA_SET:
            self.replica_sets[key] = selector
        elif group == STATEFUL_SET:
            self.stateful_sets[key] = selector
        elif group == NAMESPACE:
            self.namespaces[key[1]] = _string_map(meta.get("labels"))

    def remove(self, group: tuple[str, str], namespace: str, name: str) -> None:
        """Forget a deleted object (one never added is ignored)."""
        key = (namespace or "default", name)
        if group == SERVICE:
            self.services.pop(key, None)
        elif group == REPLICATION_CONTROLLER:
            self.replication_controllers.pop(key, None)
        elif group == REPLICA_SET:
            self.replica_sets.pop(key, None)
        elif group == STATEFUL_SET:
            self.stateful_sets.pop(key, None)
        elif group == NAMESPACE:
            self.namespaces.pop(name, None)
