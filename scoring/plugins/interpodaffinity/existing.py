"""The (anti-)affinity terms of the pods already on nodes, grouped for vectorized cycles.

InterPodAffinity asks, for every pod it places, which existing pods' terms the incoming pod
matches (their required anti-affinity filters; their required affinity, preferred affinity and
preferred anti-affinity score). Replicas carry identical terms, so the existing pods' terms are
grouped: one per-node count vector per distinct (kind, term, weight). A cycle then evaluates each
distinct term once against the incoming pod instead of every existing pod. The vectors follow
placements and removals (a ``PodListener``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from scoring.errors import InputError
from scoring.objects import Pod
from scoring.plugins.interpodaffinity.terms import (
    AFFINITY,
    ANTI_AFFINITY,
    AffinityTerm,
    has_pod_affinity,
    preferred_terms,
    required_terms,
)
from scoring.snapshot import BoolArray, IntArray, Snapshot, add_columns, keep_columns

REQUIRED_AFFINITY = "requiredAffinity"
REQUIRED_ANTI_AFFINITY = "requiredAntiAffinity"
PREFERRED_AFFINITY = "preferredAffinity"
PREFERRED_ANTI_AFFINITY = "preferredAntiAffinity"
_KEY = "InterPodAffinity/existing-terms"


@dataclass(frozen=True)
class TermGroup:
    """Existing pods' terms that are equal: their kind, the term, and its weight (0 if required)."""

    kind: str
    term: AffinityTerm
    weight: int


def pod_term_groups(pod: Pod) -> list[TermGroup]:
    """Every term of ``pod`` as a group key; a pod whose terms do not parse contributes none
    (kube-scheduler cannot build its PodInfo either)."""
    if not has_pod_affinity(pod):
        return []
    try:
        groups = [TermGroup(REQUIRED_AFFINITY, t, 0) for t in required_terms(pod, AFFINITY)]
        groups += [
            TermGroup(REQUIRED_ANTI_AFFINITY, t, 0) for t in required_terms(pod, ANTI_AFFINITY)
        ]
        groups += [
            TermGroup(PREFERRED_AFFINITY, w.term, w.weight) for w in preferred_terms(pod, AFFINITY)
        ]
        groups += [
            TermGroup(PREFERRED_ANTI_AFFINITY, w.term, w.weight)
            for w in preferred_terms(pod, ANTI_AFFINITY)
        ]
    except InputError:
        return []
    return groups


class ExistingTerms:
    """Per distinct term group: how many pods on each node carry it."""

    # Counts the terms of pods on each node, not node labels or taints: Snapshot.variant shares it.
    reads_node_labels: ClassVar[bool] = False

    def __init__(self, snapshot: Snapshot) -> None:
        self._size = len(snapshot)
        self.counts: dict[TermGroup, IntArray] = {}
        self._by_kind: dict[str, dict[TermGroup, IntArray]] = {}
        self._groups: dict[Pod, list[TermGroup]] = {}
        for node, pods in enumerate(snapshot.pods_on_node):
            for pod in pods:
                self._update(pod, node, +1)

    def _update(self, pod: Pod, node: int, delta: int) -> None:
        groups = self._groups.get(pod)
        if groups is None:
            groups = pod_term_groups(pod)
            if not groups:
                return
            self._groups[pod] = groups
        for group in groups:
            vector = self.counts.get(group)
            if vector is None:
                vector = self.counts[group] = np.zeros(self._size, dtype=np.int64)
                self._by_kind.setdefault(group.kind, {})[group] = vector
            vector[node] += delta

    def of_kind(self, kind: str) -> Iterator[tuple[TermGroup, IntArray]]:
        return iter(self._by_kind.get(kind, {}).items())

    def pod_groups(self, pod: Pod) -> list[TermGroup]:
        return self._groups.get(pod, [])

    def pod_added(self, pod: Pod, node: int) -> None:
        self._update(pod, node, +1)

    def pod_removed(self, pod: Pod, node: int) -> None:
        self._update(pod, node, -1)

    def node_event(self, kind: str, node: int) -> None:
        """Terms belong to pods: Node, NodeMetric and NRT changes leave the counts valid."""

    def nodes_deleted(self, keep: BoolArray) -> None:
        self._size = int(keep.sum())
        self._reshape(lambda vector: keep_columns(vector, keep))

    def nodes_added(self, count: int) -> None:
        self._size += count
        self._reshape(lambda vector: add_columns(vector, count))

    def _reshape(self, change: Callable[[IntArray], IntArray]) -> None:
        self.counts = {group: change(vector) for group, vector in self.counts.items()}
        self._by_kind = {
            kind: {group: self.counts[group] for group in groups}
            for kind, groups in self._by_kind.items()
        }


def existing_terms(snapshot: Snapshot) -> ExistingTerms:
    return snapshot.extension(_KEY, ExistingTerms)
