"""A pod's topology spread constraints as PodTopologySpread uses them (Kubernetes 1.35).

Upstream: pkg/scheduler/framework/plugins/podtopologyspread/common.go
(``filterTopologySpreadConstraints``, ``buildDefaultConstraints``, ``mergeLabelSetWithSelector``)
and plugin.go (``systemDefaultConstraints``), with the selector of the system defaults from
pkg/scheduler/framework/plugins/helper/spread.go (``DefaultSelector``).

Feature gates as in 1.35 by default: MinDomains, NodeInclusionPolicy and MatchLabelKeys are on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scoring.clusterobjects import ClusterObjects
from scoring.object_fields import ObjectError
from scoring.objects import Pod
from scoring.podselectors import (
    PodSelector,
    label_selector,
    selector_from_set,
)
from scoring.selectors import SelectorError

HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"

# plugin.go systemDefaultConstraints: hostname first, then zone.
SYSTEM_DEFAULT_CONSTRAINTS: tuple[Mapping[str, Any], ...] = (
    {"topologyKey": HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)


@dataclass(frozen=True)
class Constraint:
    """``topologySpreadConstraint``: one constraint with its selector parsed and defaults set."""

    index: int  # position among the pod's (or the default) constraints
    max_skew: int
    topology_key: str
    selector: PodSelector
    min_domains: int
    node_affinity_policy: str
    node_taints_policy: str

    @property
    def text(self) -> str:
        return f"{self.topology_key} maxSkew={self.max_skew} selector={self.selector.text()}"


def _int(raw: Any, path: str, pod: Pod, default: int | None = None) -> int:
    if raw is None and default is not None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ObjectError(f"Pod {pod.key}: {path}: expected an integer, got {raw!r}")
    return raw


def parse_constraints(
    raw: Sequence[Mapping[str, Any]], pod: Pod, action: str, path: str
) -> list[Constraint]:
    """``filterTopologySpreadConstraints``: the constraints whose whenUnsatisfiable is ``action``.

    ``matchLabelKeys`` adds ``key=value`` for each key the pod has, ahead of the selector's own
    requirements (a null selector stays null). A bad selector raises ``SelectorError``.
    """
    result: list[Constraint] = []
    for i, c in enumerate(raw):
        if c.get("whenUnsatisfiable") != action:
            continue
        where = f"{path}[{i}]"
        selector = label_selector(c.get("labelSelector"), f"{where}.labelSelector")
        keys = c.get("matchLabelKeys") or ()
        match = {str(k): pod.labels[k] for k in keys if k in pod.labels}
        if match and selector.requirements is not None:
            selector = selector_from_set(match).add(selector.requirements)
        result.append(
            Constraint(
                index=i,
                max_skew=_int(c.get("maxSkew"), f"{where}.maxSkew", pod),
                topology_key=str(c.get("topologyKey") or ""),
                selector=selector,
                min_domains=_int(c.get("minDomains"), f"{where}.minDomains", pod, 1),
                node_affinity_policy=str(c.get("nodeAffinityPolicy") or HONOR),
                node_taints_policy=str(c.get("nodeTaintsPolicy") or IGNORE),
            )
        )
    return result


def default_selector(pod: Pod, objects: ClusterObjects) -> PodSelector:
    """``helper.DefaultSelector``: the Services selecting the pod, then its controller.

    Services' selectors (a service without one selects nothing) and a ReplicationController's are
    merged as label sets; a ReplicaSet's or StatefulSet's ``spec.selector`` requirements are
    added. Only controllers of exactly ``v1 ReplicationController``, ``apps/v1 ReplicaSet`` or
    ``apps/v1 StatefulSet`` count, looked up by name in the pod's namespace.
    """
    merged: dict[str, str] = {}
    for (namespace, _), service_selector in objects.services.items():
        if namespace != pod.namespace or service_selector is None:
            continue
        if selector_from_set(service_selector).matches(pod.labels):
            merged.update(service_selector)
    selector = selector_from_set(merged)
    owner = pod.controller
    if owner is None:
        return selector
    kind = (str(owner.get("apiVersion") or ""), str(owner.get("kind") or ""))
    key = (pod.namespace, str(owner.get("name") or ""))
    if kind == ("v1", "ReplicationController") and key in objects.replication_controllers:
        merged.update(objects.replication_controllers[key])
        return selector_from_set(merged)
    sets = {
        ("apps/v1", "ReplicaSet"): objects.replica_sets,
        ("apps/v1", "StatefulSet"): objects.stateful_sets,
    }.get(kind)
    if sets is None or key not in sets:
        return selector
    try:
        other = label_selector(sets[key], "spec.selector")
    except SelectorError:  # LabelSelectorAsSelector failed: upstream keeps the services' selector
        return selector
    return selector.add(other.requirements or ())


def default_constraints(
    pod: Pod, defaults: Sequence[Mapping[str, Any]], objects: ClusterObjects, action: str
) -> list[Constraint]:
    """``buildDefaultConstraints``: the defaults for ``action`` with the pod's default selector;
    none when that selector is empty (no Service or controller selects the pod)."""
    constraints = parse_constraints(defaults, pod, action, "defaultConstraints")
    if not constraints:
        return []
    selector = default_selector(pod, objects)
    if selector.empty:
        return []
    return [
        Constraint(
            c.index,
            c.max_skew,
            c.topology_key,
            selector,
            c.min_domains,
            c.node_affinity_policy,
            c.node_taints_policy,
        )
        for c in constraints
    ]
