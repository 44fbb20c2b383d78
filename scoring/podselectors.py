"""Label selectors over *pods*, and per-node counts of the pods a selector matches.

PodTopologySpread and InterPodAffinity both ask "how many pods of these namespaces matching
this selector run on each node?" for every node, for every pod they place. :class:`PodCounts`
answers with an int64 vector per (namespaces, selector), built once by walking the snapshot's
pods and then kept in step with placements and removals (a :class:`~scoring.snapshot.
PodListener`), so a scheduling cycle reads a vector instead of walking 50,000 pods.

Selector semantics are ``labels.Selector.Matches`` (k8s.io/apimachinery/pkg/labels/selector.go)
as built by ``metav1.LabelSelectorAsSelector``: a null selector selects nothing, ``{}`` selects
everything.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from scoring import field_errors as fe
from scoring.objects import Pod
from scoring.selectors import Requirement, SelectorError, parse_label_selector
from scoring.snapshot import BoolArray, IntArray, Snapshot, add_columns, keep_columns

_COUNTS_KEY = "podselectors:counts"
MAX_CACHED_SELECTORS = 512


def requirement_matches(req: Requirement, labels: Mapping[str, str]) -> bool:
    """``labels.Requirement.Matches`` for the label-selector operators."""
    match req.operator:
        case "In" | "Equals":
            return req.key in labels and labels[req.key] in req.values
        case "NotIn":
            return req.key not in labels or labels[req.key] not in req.values
        case "Exists":
            return req.key in labels
        case "DoesNotExist":
            return req.key not in labels
    return False


@dataclass(frozen=True)
class PodSelector:
    """A parsed ``labels.Selector``; ``requirements`` None is ``labels.Nothing()``."""

    requirements: tuple[Requirement, ...] | None

    @property
    def empty(self) -> bool:
        """``Selector.Empty()``: no requirements (``labels.Everything()``); Nothing is not empty."""
        return self.requirements == ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.requirements is None:
            return False
        return all(requirement_matches(r, labels) for r in self.requirements)

    def add(self, requirements: Iterable[Requirement]) -> PodSelector:
        """``Selector.Add``: Nothing stays Nothing."""
        if self.requirements is None:
            return self
        return PodSelector((*self.requirements, *requirements))

    def text(self) -> str:
        """Readable form for explanations (``<nothing>`` / ``<everything>`` as Go prints them)."""
        if self.requirements is None:
            return "<nothing>"
        if not self.requirements:
            return "<everything>"
        return ",".join(_text(r) for r in self.requirements)


def _text(req: Requirement) -> str:
    if req.operator == "Equals":
        return f"{req.key}={req.values[0]}"
    return str(req)


NOTHING = PodSelector(None)
EVERYTHING = PodSelector(())


def label_selector(raw: Any, path: str) -> PodSelector:
    """``metav1.LabelSelectorAsSelector``; raises ``SelectorError`` naming ``path`` on bad input."""
    if raw is None:
        return NOTHING
    if not isinstance(raw, Mapping):
        raise SelectorError([fe.invalid(path, raw, "must be an object")])
    return _parsed(json.dumps(raw, sort_keys=True, default=str), path)


@lru_cache(maxsize=4096)
def _parsed(canonical: str, path: str) -> PodSelector:
    """Parsing validates every key and value; replicas repeat the same selectors every cycle."""
    return PodSelector(tuple(parse_label_selector(json.loads(canonical), path)))


def selector_from_set(labels: Mapping[str, str]) -> PodSelector:
    """``labels.SelectorFromSet`` / ``Set.AsSelector``: one equality per key, sorted by key."""
    return PodSelector(tuple(Requirement(k, "Equals", (labels[k],)) for k in sorted(labels)))


# -- per-node counts ----------------------------------------------------------------------------

Scope = frozenset[str] | None  # namespaces; None means every namespace


@dataclass(frozen=True)
class CountKey:
    scope: Scope
    selector: PodSelector
    skip_terminating: bool


def _in_scope(scope: Scope, namespace: str) -> bool:
    return scope is None or namespace in scope


Signature = tuple[str, bool, tuple[tuple[str, str], ...]]  # namespace, terminating, labels


def _signature(pod: Pod) -> Signature:
    return (pod.namespace, pod.terminating, tuple(sorted(pod.labels.items())))


class PodCounts:
    """Matching-pod counts per node for the (namespaces, selector) pairs asked for so far.

    Pods are indexed by their *signature* (namespace, terminating, labels): replicas share one,
    so a new selector is matched once per signature, not once per pod, and a placement updates
    only the vectors its signature is known to match. Vectors are built on first use and the
    least recently used beyond :data:`MAX_CACHED_SELECTORS` are dropped (rebuilt if asked again).
    """

    # Counts matching pods per node, not node labels or taints: Snapshot.variant shares it.
    reads_node_labels: ClassVar[bool] = False

    def __init__(self, snapshot: Snapshot) -> None:
        self._size = len(snapshot)
        self._vectors: OrderedDict[CountKey, IntArray] = OrderedDict()
        self._nodes: dict[Signature, list[int]] = {}  # node of each pod, per signature
        self._matches: dict[Signature, set[CountKey]] = {}  # cached keys the signature matches
        for node, pods in enumerate(snapshot.pods_on_node):
            for pod in pods:
                self._nodes.setdefault(_signature(pod), []).append(node)

    def counts(self, snapshot: Snapshot, key: CountKey) -> IntArray:
        """Per node: pods in ``key.scope`` whose labels ``key.selector`` matches (read-only)."""
        vector = self._vectors.get(key)
        if vector is not None:
            self._vectors.move_to_end(key)
            return vector
        nodes: list[int] = []
        for signature, members in self._nodes.items():
            if _signature_counted(key, signature):  # empty signatures too: pods may come back
                nodes.extend(members)
                self._matches.setdefault(signature, set()).add(key)
        vector = np.bincount(np.array(nodes, dtype=np.int64), minlength=self._size)
        vector.flags.writeable = False
        self._vectors[key] = vector
        if len(self._vectors) > MAX_CACHED_SELECTORS:
            self._vectors.popitem(last=False)  # its entries in _matches are skipped from now on
        return vector

    def _update(self, pod: Pod, node: int, delta: int) -> None:
        signature = _signature(pod)
        members = self._nodes.get(signature)
        if members is None:
            members = self._nodes[signature] = []
            self._matches[signature] = {
                k for k in self._vectors if _signature_counted(k, signature)
            }
        if delta > 0:
            members.append(node)
        else:
            members.remove(node)
        for key in self._matches.get(signature, ()):
            vector = self._vectors.get(key)
            if vector is not None:
                vector.flags.writeable = True
                vector[node] += delta
                vector.flags.writeable = False

    def pod_added(self, pod: Pod, node: int) -> None:
        self._update(pod, node, +1)

    def pod_removed(self, pod: Pod, node: int) -> None:
        self._update(pod, node, -1)

    def node_event(self, kind: str, node: int) -> None:
        """Counts depend on pods only: Node, NodeMetric and NRT changes leave them valid."""

    def nodes_deleted(self, keep: BoolArray) -> None:
        """Deleted nodes hold no pod any more (their pods were removed first): renumber."""
        position = np.cumsum(keep) - 1
        self._size = int(keep.sum())
        self._nodes = {s: [int(position[n]) for n in nodes] for s, nodes in self._nodes.items()}
        self._reshape(lambda vector: keep_columns(vector, keep))

    def nodes_added(self, count: int) -> None:
        self._size += count
        self._reshape(lambda vector: add_columns(vector, count))

    def _reshape(self, change: Callable[[IntArray], IntArray]) -> None:
        for key, vector in self._vectors.items():
            reshaped = change(vector)
            reshaped.flags.writeable = False
            self._vectors[key] = reshaped


def _signature_counted(key: CountKey, signature: Signature) -> bool:
    namespace, terminating, labels = signature
    if key.skip_terminating and terminating:
        return False
    return _in_scope(key.scope, namespace) and key.selector.matches(dict(labels))


def _counted(key: CountKey, pod: Pod) -> bool:
    if key.skip_terminating and pod.terminating:
        return False
    return _in_scope(key.scope, pod.namespace) and key.selector.matches(pod.labels)


def pod_counts(snapshot: Snapshot, key: CountKey) -> IntArray:
    """The snapshot's :class:`PodCounts` vector for ``key``."""
    return snapshot.extension(_COUNTS_KEY, PodCounts).counts(snapshot, key)


def matching_pods(
    snapshot: Snapshot, key: CountKey, nodes: Iterable[int], limit: int | None = None
) -> list[Pod]:
    """The pods behind the counts on ``nodes``, at most ``limit`` (for explanations: only the
    given nodes that have a matching pod are walked)."""
    counts = pod_counts(snapshot, key)
    found: list[Pod] = []
    for node in nodes:
        if not counts[node]:
            continue
        for pod in snapshot.pods_on_node[node]:
            if _counted(key, pod):
                found.append(pod)
                if limit is not None and len(found) >= limit:
                    return found
    return found
