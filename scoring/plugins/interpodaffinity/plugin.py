"""InterPodAffinity (in-tree, Kubernetes 1.35 semantics), vectorized over nodes.

Upstream: pkg/scheduler/framework/plugins/interpodaffinity/{filtering.go,scoring.go,plugin.go}.

Filter (counts per topology pair ``key=value``, from pods on every node):
- the incoming pod's required affinity: a node lacking a term's topology key fails; so does a
  node where some term's domain holds no pod matching *all* the terms, unless no such pod exists
  anywhere and the pod matches all its own terms (the first pod of a group) —
  UnschedulableAndUnresolvable, "node(s) didn't match pod affinity rules";
- the incoming pod's required anti-affinity: a node whose domain for a term holds a pod matching
  that term — Unschedulable, "node(s) didn't match pod anti-affinity rules";
- existing pods' required anti-affinity: a node sharing a topology pair with an existing pod
  whose anti-affinity term matches the incoming pod — Unschedulable, "node(s) didn't satisfy
  existing pods anti-affinity rules".

Score: per topology pair, the weights of the incoming pod's preferred terms times the pods
matching them (anti-affinity negative), plus for existing pods' terms that match the incoming
pod: required affinity at ``hardPodAffinityWeight``, preferred affinity at +weight, preferred
anti-affinity at -weight. A node scores the sum over its labels; NormalizeScore scales
``(s - min) / (max - min)`` to 0..100 (truncated). ``ignorePreferredTermsOfExistingPods`` skips
scoring for pods without preferred terms of their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scoring.framework import (
    MAX_NODE_SCORE,
    SKIP,
    SUCCESS,
    Cycle,
    FilterResult,
    Plugin,
    PluginError,
    Status,
    error,
    unresolvable,
    unschedulable,
)
from scoring.objects import Pod
from scoring.plugins.interpodaffinity.existing import (
    PREFERRED_AFFINITY,
    PREFERRED_ANTI_AFFINITY,
    REQUIRED_AFFINITY,
    REQUIRED_ANTI_AFFINITY,
    TermGroup,
    existing_terms,
)
from scoring.plugins.interpodaffinity.terms import (
    AFFINITY,
    ANTI_AFFINITY,
    PREFERRED,
    AffinityTerm,
    WeightedTerm,
    count_key,
    merged_scope,
    parse_error,
    preferred_terms,
    required_terms,
)
from scoring.podselectors import CountKey, matching_pods, pod_counts
from scoring.snapshot import BoolArray, IntArray, Snapshot

REASON_AFFINITY = "node(s) didn't match pod affinity rules"
REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
REASON_EXISTING = "node(s) didn't satisfy existing pods anti-affinity rules"
_FILTER_KEY = "PreFilterInterPodAffinity"
_SCORE_KEY = "PreScoreInterPodAffinity"
_EXPLAINED_PODS = 20


class PairCounts:
    """``topologyToMatchedTermCount``: a count per (topology key, value), as per-key arrays."""

    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        self.by_key: dict[str, IntArray] = {}
        self.touched: dict[str, BoolArray] = {}

    def add(self, key: str, per_node: IntArray, factor: int = 1) -> None:
        """Add ``factor`` × each node's count to the pair (key, the node's value of key).

        Only nodes with a nonzero count are looked at (counts are sparse: a term's pods sit on
        few nodes); a pair they reach is *touched* even when ``factor`` is 0, as upstream's map
        gets an entry.
        """
        column = self._snapshot.label_column(key)
        size = len(column.vocabulary) + 1  # the last slot stays 0 (read for missing keys)
        counts = self.by_key.setdefault(key, np.zeros(size, dtype=np.int64))
        touched = self.touched.setdefault(key, np.zeros(size, dtype=bool))
        nodes = np.flatnonzero(per_node)
        codes = column.codes[nodes]
        keep = codes >= 0
        codes, amounts = codes[keep], per_node[nodes[keep]]
        if len(codes):
            np.add.at(counts, codes, factor * amounts)
            touched[codes] = True

    def at_nodes(self, key: str) -> IntArray:
        """Each node's count for its own value of ``key`` (0 without the key)."""
        counts = self.by_key.get(key)
        codes = self._snapshot.label_column(key).codes
        if counts is None:
            return np.zeros(len(codes), dtype=np.int64)
        result: IntArray = counts[codes]  # code -1 (no such label) reads the last, empty slot
        return result

    def positive(self) -> bool:
        """``len(map) > 0``: some pair has a nonzero count."""
        return any(bool((c != 0).any()) for c in self.by_key.values())

    def any_touched(self) -> bool:
        return any(bool(t.any()) for t in self.touched.values())


@dataclass
class FilterState:
    affinity_terms: list[AffinityTerm]
    anti_terms: list[AffinityTerm]
    affinity_key: CountKey | None
    anti_keys: list[CountKey]
    affinity: PairCounts
    anti: PairCounts
    existing: PairCounts
    existing_groups: list[TermGroup] = field(default_factory=list)  # matched the incoming pod
    self_match: bool = False  # the pod matches all its own affinity terms


@dataclass
class ScoreState:
    scores: PairCounts
    feasible: IntArray
    incoming: list[tuple[WeightedTerm, int, CountKey]]  # (term, +1/-1, counted pods)
    existing: list[tuple[TermGroup, int]]  # matched existing terms and their signed weight


def _namespace_labels(snapshot: Snapshot, pod: Pod) -> Mapping[str, str] | None:
    """``GetNamespaceLabelsSnapshot``: nil when the snapshot has no such Namespace."""
    return snapshot.cluster_objects.namespaces.get(pod.namespace)


class InterPodAffinity(Plugin):
    """Place pods near or away from other pods by label, per topology domain."""

    name = "InterPodAffinity"
    points = frozenset({"preFilter", "filter", "preScore", "score"})
    normalizes = True
    # Verdicts depend on pods on other nodes of the same domain: never cached.

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__(args)
        weight = args.get("hardPodAffinityWeight")
        self.hard_weight = 1 if weight is None else int(weight)
        self.ignore_existing_preferred = bool(args.get("ignorePreferredTermsOfExistingPods"))

    # -- filter -----------------------------------------------------------------------------

    def pre_filter(self, cycle: Cycle) -> Status:
        snapshot, pod = cycle.snapshot, cycle.pod
        problem = parse_error(pod)
        if problem is not None:
            return unresolvable(f"parsing pod: {problem}")
        affinity_terms = required_terms(pod, AFFINITY)
        anti_terms = required_terms(pod, ANTI_AFFINITY)
        namespaces = snapshot.cluster_objects.namespaces
        ns_labels = _namespace_labels(snapshot, pod)
        index = existing_terms(snapshot)
        existing = PairCounts(snapshot)
        matched_groups = []
        for group, vector in index.of_kind(REQUIRED_ANTI_AFFINITY):
            if group.term.matches(pod, ns_labels):
                existing.add(group.term.topology_key, vector)
                matched_groups.append(group)
        affinity = PairCounts(snapshot)
        affinity_key = None
        if affinity_terms:
            scopes = [merged_scope(t, namespaces) for t in affinity_terms]
            affinity_key = count_key(affinity_terms, scopes)
            matching = pod_counts(snapshot, affinity_key)
            for term in affinity_terms:
                affinity.add(term.topology_key, matching)
        anti = PairCounts(snapshot)
        anti_keys = []
        for term in anti_terms:
            key = count_key([term], [merged_scope(term, namespaces)])
            anti.add(term.topology_key, pod_counts(snapshot, key))
            anti_keys.append(key)
        if not existing.positive() and not affinity_terms and not anti_terms:
            return SKIP
        self_match = affinity_key is not None and _matches(affinity_key, pod)
        cycle.state[_FILTER_KEY] = FilterState(
            affinity_terms,
            anti_terms,
            affinity_key,
            anti_keys,
            affinity,
            anti,
            existing,
            matched_groups,
            self_match,
        )
        return SUCCESS

    def filter(self, cycle: Cycle) -> FilterResult:
        state: FilterState | None = cycle.state.get(_FILTER_KEY)
        n = len(cycle.snapshot)
        if state is None:
            return FilterResult.success(n)
        failures = [
            (~self._affinity_ok(cycle.snapshot, state), unresolvable(REASON_AFFINITY)),
            (self._anti_blocked(cycle.snapshot, state), unschedulable(REASON_ANTI_AFFINITY)),
            (self._existing_blocked(state, n), unschedulable(REASON_EXISTING)),
        ]
        return FilterResult.from_masks(n, failures)

    @staticmethod
    def _affinity_ok(snapshot: Snapshot, state: FilterState) -> BoolArray:
        """``satisfyPodAffinity`` on every node."""
        n = len(snapshot)
        has_all = np.ones(n, dtype=bool)
        pods_exist = np.ones(n, dtype=bool)
        for term in state.affinity_terms:
            has_all &= snapshot.label_column(term.topology_key).codes >= 0
            pods_exist &= state.affinity.at_nodes(term.topology_key) > 0
        first_of_group = not state.affinity.positive() and state.self_match
        result: BoolArray = has_all & (pods_exist | first_of_group)
        return result

    @staticmethod
    def _anti_blocked(snapshot: Snapshot, state: FilterState) -> BoolArray:
        blocked = np.zeros(len(snapshot), dtype=bool)
        for term in state.anti_terms:
            blocked |= state.anti.at_nodes(term.topology_key) > 0
        return blocked

    @staticmethod
    def _existing_blocked(state: FilterState, n: int) -> BoolArray:
        blocked = np.zeros(n, dtype=bool)
        for key in state.existing.by_key:
            blocked |= state.existing.at_nodes(key) > 0
        return blocked

    # -- score ------------------------------------------------------------------------------

    def pre_score(self, cycle: Cycle, feasible: IntArray) -> Status:
        snapshot, pod = cycle.snapshot, cycle.pod
        problem = parse_error(pod)
        if problem is not None:  # PreFilter rejects such a pod first, as upstream
            return error(f"failed to parse pod: {problem}")
        preferred = [(w, +1) for w in preferred_terms(pod, AFFINITY)]
        preferred += [(w, -1) for w in preferred_terms(pod, ANTI_AFFINITY)]
        has_constraints = any(
            (pod.affinity.get(kind) or {}).get(PREFERRED) for kind in (AFFINITY, ANTI_AFFINITY)
        )
        if self.ignore_existing_preferred and not has_constraints:
            return SKIP
        scores = PairCounts(snapshot)
        namespaces = snapshot.cluster_objects.namespaces
        incoming = []
        for weighted, sign in preferred:
            key = count_key([weighted.term], [merged_scope(weighted.term, namespaces)])
            scores.add(
                weighted.term.topology_key, pod_counts(snapshot, key), sign * weighted.weight
            )
            incoming.append((weighted, sign, key))
        existing = []
        ns_labels = _namespace_labels(snapshot, pod)
        index = existing_terms(snapshot)
        for kind in (REQUIRED_AFFINITY, PREFERRED_AFFINITY, PREFERRED_ANTI_AFFINITY):
            for group, vector in index.of_kind(kind):
                signed = self._existing_weight(group)
                if signed is None or not group.term.matches(pod, ns_labels):
                    continue
                scores.add(group.term.topology_key, vector, signed)
                existing.append((group, signed))
        if not scores.any_touched():
            return SKIP
        cycle.state[_SCORE_KEY] = ScoreState(scores, feasible, incoming, existing)
        return SUCCESS

    def _existing_weight(self, group: TermGroup) -> int | None:
        """The signed weight an existing pod's term adds when it matches the incoming pod."""
        if group.kind == REQUIRED_AFFINITY:
            return self.hard_weight if self.hard_weight > 0 else None
        if group.kind == PREFERRED_AFFINITY:
            return group.weight
        if group.kind == PREFERRED_ANTI_AFFINITY:
            return -group.weight
        return None

    def _score_state(self, cycle: Cycle) -> ScoreState:
        state: ScoreState | None = cycle.state.get(_SCORE_KEY)
        if state is None:
            raise PluginError(f'failed to read "{_SCORE_KEY}" from cycleState: not found')
        return state

    def score(self, cycle: Cycle, feasible: IntArray) -> IntArray:
        scores = self._score_state(cycle).scores
        total = np.zeros(len(cycle.snapshot), dtype=np.int64)
        for key in scores.by_key:
            total += scores.at_nodes(key)
        result: IntArray = total[feasible]
        return result

    def normalize(self, cycle: Cycle, scores: IntArray) -> IntArray:
        if len(scores) == 0:
            return scores
        low, high = int(scores.min()), int(scores.max())
        if high - low <= 0:
            return np.zeros_like(scores)
        scaled = float(MAX_NODE_SCORE) * ((scores - low).astype(np.float64) / float(high - low))
        result: IntArray = scaled.astype(np.int64)  # Go's int64() truncates
        return result

    # -- explanation ------------------------------------------------------------------------

    explained_by = (_FILTER_KEY, _SCORE_KEY)

    def explain(self, cycle: Cycle, node: int) -> Mapping[str, Any] | None:
        """Which term decided, on which topology value, and which pods matched."""
        detail: dict[str, Any] = {}
        state: FilterState | None = cycle.state.get(_FILTER_KEY)
        if state is not None:
            detail.update(self._explain_filter(cycle, state, node))
        score: ScoreState | None = cycle.state.get(_SCORE_KEY)
        if score is not None:
            detail["scoreTerms"] = self._explain_score(cycle, score, node)
        return detail or None

    def _explain_filter(self, cycle: Cycle, state: FilterState, node: int) -> dict[str, Any]:
        snapshot = cycle.snapshot
        detail: dict[str, Any] = {}
        if state.affinity_terms:
            key = state.affinity_key
            detail["requiredAffinityTerms"] = [
                _domain_entry(snapshot, t, node, state.affinity, key) for t in state.affinity_terms
            ]
            detail["firstPodOfGroup"] = not state.affinity.positive() and state.self_match
        if state.anti_terms:
            detail["requiredAntiAffinityTerms"] = [
                _domain_entry(snapshot, t, node, state.anti, key)
                for t, key in zip(state.anti_terms, state.anti_keys, strict=True)
            ]
        blocking = [g for g in state.existing_groups if _on_domain(snapshot, g, node)]
        if blocking:
            detail["existingAntiAffinity"] = [
                {
                    "term": g.term.text(),
                    "domain": _domain(snapshot, g.term.topology_key, node),
                    "pods": _owners(snapshot, g, node),
                }
                for g in blocking
            ]
        return detail

    def _explain_score(self, cycle: Cycle, state: ScoreState, node: int) -> list[dict[str, Any]]:
        snapshot = cycle.snapshot
        out = []
        for weighted, sign, key in state.incoming:
            entry = _domain_entry(snapshot, weighted.term, node, None, key)
            entry.update(source="incoming", weight=sign * weighted.weight)
            out.append(entry)
        for group, signed in state.existing:
            if _on_domain(snapshot, group, node):
                out.append(
                    {
                        "source": "existing",
                        "kind": group.kind,
                        "weight": signed,
                        "term": group.term.text(),
                        "domain": _domain(snapshot, group.term.topology_key, node),
                        "pods": _owners(snapshot, group, node),
                    }
                )
        return out


def _matches(key: CountKey, pod: Pod) -> bool:
    in_scope = key.scope is None or pod.namespace in key.scope
    return in_scope and key.selector.matches(pod.labels)


def _domain(snapshot: Snapshot, key: str, node: int) -> str | None:
    value = snapshot.nodes[node].labels.get(key)
    return None if value is None else f"{key}={value}"


def _domain_nodes(snapshot: Snapshot, key: str, node: int) -> IntArray:
    codes = snapshot.label_column(key).codes
    if codes[node] < 0:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(codes == codes[node]).astype(np.int64)


def _on_domain(snapshot: Snapshot, group: TermGroup, node: int) -> bool:
    """Whether some pod carrying ``group``'s term runs in the node's domain of its key."""
    vector = existing_terms(snapshot).counts.get(group)
    if vector is None:
        return False
    return bool(vector[_domain_nodes(snapshot, group.term.topology_key, node)].any())


def _owners(snapshot: Snapshot, group: TermGroup, node: int) -> list[str]:
    """Up to 20 pods in the node's domain carrying ``group``'s term (walks only nodes with one)."""
    index = existing_terms(snapshot)
    vector = index.counts.get(group)
    if vector is None:
        return []
    members = _domain_nodes(snapshot, group.term.topology_key, node)
    pods: list[str] = []
    for i in members[vector[members] > 0]:
        pods += [p.key for p in snapshot.pods_on_node[int(i)] if group in index.pod_groups(p)]
        if len(pods) >= _EXPLAINED_PODS:
            break
    return pods[:_EXPLAINED_PODS]


def _domain_entry(
    snapshot: Snapshot,
    term: AffinityTerm,
    node: int,
    counts: PairCounts | None,
    key: CountKey | None,
) -> dict[str, Any]:
    members = _domain_nodes(snapshot, term.topology_key, node)
    matching = 0 if key is None else int(pod_counts(snapshot, key)[members].sum())
    pods = [] if key is None else matching_pods(snapshot, key, members.tolist(), _EXPLAINED_PODS)
    entry: dict[str, Any] = {
        "term": term.text(),
        "domain": _domain(snapshot, term.topology_key, node),
        "matchingPods": matching,
        "matchedPods": [p.key for p in pods],
    }
    if counts is not None:
        entry["count"] = int(counts.at_nodes(term.topology_key)[node])
    return entry
