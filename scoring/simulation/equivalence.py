"""Equivalence classes: pods every modelled plugin treats identically share cached results.

The class of a pod is the tuple of every pod field a modelled Filter or Score reads (see
docs/equivalence-classes.md for the list and the reason for each). The tuple itself is the
dictionary key, so two pods share a class only when those fields are *equal*, not merely when a
hash collides.

Upstream's equivalence-class design (kubernetes community
contributors/design-proposals/scheduling/scheduler-equivalence-class.md) chose the controller
reference instead, because a field-based key can silently miss a field some new predicate reads.
The engine hashes the fields anyway: a controller's pods differ after a template change (old and
new revisions coexist during a rollout) and the controller reference cannot tell them apart. The
"missed field" risk is covered by ``HASHED_POD_FIELDS`` / ``IGNORED_POD_FIELDS``, which a test
holds equal to the fields of :class:`scoring.objects.Pod`: adding a field fails that test until
someone decides which side it belongs to. Pods of one controller revision still share a class,
because their scheduling fields come from the same template.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from scoring.containers import Container
from scoring.objects import Pod

ClassKey = tuple[Any, ...]

LOAD_ESTIMATION_PREFIX = "scheduling.koordinator.sh/load-estimated-"

# Pod fields folded into the key, and fields deliberately left out (with the reason).
HASHED_POD_FIELDS = frozenset(
    {
        "namespace",  # PodTopologySpread and InterPodAffinity (term namespaces, namespace labels)
        "scheduler_name",  # picks the profile
        "node_name",  # NodeName
        "priority",  # Koordinator priority class (LoadAwareScheduling)
        "node_selector",  # NodeAffinity
        "affinity",  # NodeAffinity (the whole block, so pod (anti-)affinity is covered too)
        "tolerations",  # TaintToleration, NodeUnschedulable
        # containers, init containers (sidecars too) and overhead: requests, limits, host
        # ports, restart policy, image: every resource plugin, and ImageLocality
        "resources",
        "owner_references",  # DaemonSet or not (LimitAware, LoadAware); the controller (spreading)
        "status_qos_class",  # QoS class (NodeResourceTopologyMatch, Koordinator priority)
        "labels",  # all: PodTopologySpread self-match, matchLabelKeys, Service selection
        "topology_spread_constraints",  # PodTopologySpread
        "annotations",  # only LOAD_ESTIMATION_PREFIX keys
    }
)
IGNORED_POD_FIELDS = frozenset(
    {
        "name",  # identity, differs per replica
        "uid",  # identity
        "phase",  # pending pods are all Pending
        "source",  # the manifest; its relevant parts are the fields above
        "terminating",  # read of the pods already placed (spreading counts), not of this one
        "creation_timestamp",  # the descheduler's eviction order
        "volumes",  # the descheduler's evictability
        "status_conditions",  # LoadAware reads them once the pod is placed (Reserve), not before
    }
)


def equivalence_key(pod: Pod) -> ClassKey:
    """The class of ``pod``: equal keys mean every modelled plugin gives equal results."""
    return (
        pod.scheduler_name,
        pod.namespace,
        pod.node_name,
        pod.priority,
        _items(pod.node_selector),
        _canonical(pod.affinity),
        pod.tolerations,
        tuple(_container(c) for c in pod.containers),
        tuple(_container(c) for c in pod.init_containers),
        _items(pod.overhead),
        pod.status_qos_class,
        any(ref.get("kind") == "DaemonSet" for ref in pod.owner_references),
        _controller(pod),
        _items(pod.labels),
        tuple(_canonical(c) for c in pod.topology_spread_constraints),
        _items({k: v for k, v in pod.annotations.items() if k.startswith(LOAD_ESTIMATION_PREFIX)}),
    )


def class_label(pod: Pod) -> str:
    """A readable name for the pod's class: its controller, or the pod itself."""
    controller = pod.controller
    if controller is None:
        return f"Pod {pod.key}"
    return f"{controller.get('kind', '?')} {pod.namespace}/{controller.get('name', '?')}"


def _controller(pod: Pod) -> tuple[str, str, str] | None:
    """The controller reference PodTopologySpread's default selector looks up."""
    owner = pod.controller
    if owner is None:
        return None
    return (str(owner.get("apiVersion")), str(owner.get("kind")), str(owner.get("name")))


def _items(mapping: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted(mapping.items()))


def _container(container: Container) -> tuple[Any, ...]:
    return (
        container.name,
        container.image,
        _items(container.requests),
        _items(container.limits),
        container.ports,
        container.restartable,
    )


def _canonical(value: Mapping[str, Any]) -> str:
    """Affinity as canonical JSON (empty for none): nested lists and maps, compared exactly."""
    return json.dumps(value, sort_keys=True, separators=(",", ":")) if value else ""
