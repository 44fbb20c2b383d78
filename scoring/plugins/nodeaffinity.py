"""NodeAffinity (in-tree, Kubernetes 1.35 semantics).

Upstream: pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go over
k8s.io/component-helpers/scheduling/corev1/nodeaffinity (see :mod:`scoring.selectors`).

- PreFilter: Skip when the pod has no ``nodeSelector``, no required node affinity and the plugin
  has no ``addedAffinity.required...``. When every required term pins ``metadata.name In``, the
  union of those names bounds the feasible nodes, and an empty union (each term's names conflict)
  rejects the pod everywhere: "pod affinity terms conflict".
- Filter: ``addedAffinity`` first ("...scheduler-enforced node affinity"), then the pod's
  ``nodeSelector`` AND its required terms ("...Pod's node affinity/selector"); both
  UnschedulableAndUnresolvable. A required term that fails to parse just never matches.
- PreScore: Skip without preferred terms (pod or ``addedAffinity``); a preferred term that fails
  to parse is an Error (the scheduling cycle fails).
- Score: the sum of the weights of matching preferred terms, pod's plus added;
  NormalizeScore is ``DefaultNormalizeScore`` (not reversed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scoring.columnar.values import Table, Values
from scoring.framework import (
    SKIP,
    SUCCESS,
    Cycle,
    FilterResult,
    Plugin,
    PluginError,
    Status,
    default_normalize,
    error,
    unresolvable,
)
from scoring.objects import Pod
from scoring.selectors import (
    NAME_FIELD,
    SelectorError,
    SelectorTerm,
    WeightedTerm,
    aggregate_message,
    match_labels,
    parse_node_selector_terms,
    parse_preferred_terms,
    term_errors,
    term_mask,
    terms_mask,
)
from scoring.snapshot import NODE_EVENT, BoolArray, IntArray, Snapshot

REASON_POD = "node(s) didn't match Pod's node affinity/selector"
REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
REASON_CONFLICT = "pod affinity terms conflict"
_ADDED = "addedAffinity"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_FILTER_KEY = "NodeAffinity/filter"
_SCORE_KEY = "NodeAffinity/score"


# -- the pod's affinity, parsed -----------------------------------------------------------------


def _node_affinity(pod: Pod) -> Mapping[str, Any]:
    node_affinity = pod.affinity.get("nodeAffinity")
    return node_affinity if isinstance(node_affinity, Mapping) else {}


def required_selector(pod: Pod) -> Mapping[str, Any] | None:
    """``requiredDuringScheduling...``; None when unset (a set ``{}`` matches no node)."""
    required = _node_affinity(pod).get(_REQUIRED)
    if required is None:
        return None
    return required if isinstance(required, Mapping) else {}


def required_terms(pod: Pod) -> list[SelectorTerm] | None:
    """``GetRequiredNodeAffinity``: the pod's required terms (None when the field is unset)."""
    required = required_selector(pod)
    if required is None:
        return None
    path = f"spec.affinity.nodeAffinity.{_REQUIRED}.nodeSelectorTerms"
    return parse_node_selector_terms(required.get("nodeSelectorTerms"), path)


def has_preferred(pod: Pod) -> bool:
    """Whether the pod has preferred terms (an empty list counts as none, see below)."""
    return bool(_node_affinity(pod).get(_PREFERRED))


def preferred_terms(pod: Pod) -> tuple[list[WeightedTerm], list[Any]] | None:
    """The pod's preferred terms and parse errors; None when there are none.

    An empty list counts as unset: the API server drops it (``omitempty``), so a stored pod
    never carries one, and upstream's ``!= nil`` test cannot tell them apart.
    """
    raw = _node_affinity(pod).get(_PREFERRED)
    if not raw:
        return None
    terms, errors = parse_preferred_terms(raw)  # upstream parses with a root path: "[0]...."
    return terms, errors


def raw_required_terms(pod: Pod) -> list[Any]:
    required = required_selector(pod) or {}
    terms = required.get("nodeSelectorTerms")
    return terms if isinstance(terms, list) else []


def names_bound(raw_terms: Sequence[Any]) -> set[str] | None:
    """PreFilter's node-name bound: the union over terms of their ``metadata.name In`` sets.

    None when some term has no such requirement (any node may match that term). Read from the
    raw terms, as upstream does, so empty or unparsable terms count too.
    """
    union: set[str] = set()
    for term in raw_terms:
        names: set[str] | None = None
        fields = term.get("matchFields") if isinstance(term, Mapping) else None
        for req in fields if isinstance(fields, list) else ():
            if isinstance(req, Mapping) and (req.get("key"), req.get("operator")) == (
                NAME_FIELD,
                "In",
            ):
                values = {v for v in req.get("values") or () if isinstance(v, str)}
                names = values if names is None else names & values
        if names is None:
            return None
        union |= names
    return union


# -- per-cycle masks ----------------------------------------------------------------------------


@dataclass(frozen=True)
class FilterMasks:
    """Vectorized Filter inputs, kept for explanations."""

    enforced: BoolArray | None  # nodes matching addedAffinity.required (None: no added)
    selector: BoolArray  # nodes matching spec.nodeSelector
    terms: list[tuple[SelectorTerm, BoolArray]] | None  # required terms (None: unset)
    names_bound: set[str] | None = None  # PreFilterResult node names, when they bound the terms

    @property
    def pod_match(self) -> BoolArray:
        match = self.selector.copy()
        if self.terms is not None:
            any_term = np.zeros_like(match)
            for _, mask in self.terms:
                any_term |= mask
            match &= any_term
        return match


@dataclass(frozen=True)
class ScoreParts:
    """Preferred terms with their per-node masks (``source`` is "pod" or "addedAffinity")."""

    terms: list[tuple[str, WeightedTerm, BoolArray]]

    def total(self) -> IntArray:
        if not self.terms:
            return np.zeros(0, dtype=np.int64)
        total = np.zeros(len(self.terms[0][2]), dtype=np.int64)
        for _, weighted, mask in self.terms:
            total += weighted.weight * mask
        return total


# -- args -----------------------------------------------------------------------------------------


def _added_required(args: Mapping[str, Any]) -> list[SelectorTerm] | None:
    added = args.get(_ADDED) or {}
    required = added.get(_REQUIRED)
    if required is None:
        return None
    path = f"{_ADDED}.{_REQUIRED}.nodeSelectorTerms"
    terms = parse_node_selector_terms(required.get("nodeSelectorTerms"), path)
    errors = term_errors(terms)
    if errors:  # New() fails: "parsing addedAffinity.requiredDuringScheduling...: <errs>"
        raise SelectorError(errors, f"NodeAffinity: parsing {_ADDED}.{_REQUIRED}")
    return terms


def _added_preferred(args: Mapping[str, Any]) -> list[WeightedTerm] | None:
    raw = (args.get(_ADDED) or {}).get(_PREFERRED)
    if not raw:
        return None
    terms, errors = parse_preferred_terms(raw, f"{_ADDED}.{_PREFERRED}")
    if errors:
        raise SelectorError(errors, f"NodeAffinity: parsing {_ADDED}.{_PREFERRED}")
    return terms


# -- the plugin -------------------------------------------------------------------------------


class NodeAffinity(Plugin):
    """Match ``nodeSelector`` and node affinity; score preferred terms."""

    name = "NodeAffinity"
    points = frozenset({"preFilter", "filter", "preScore", "score"})
    depends_on = frozenset({NODE_EVENT})
    normalizes = True

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__(args)
        self.added_required = _added_required(args)
        self.added_preferred = _added_preferred(args)

    # -- filter -----------------------------------------------------------------------------

    def pre_filter(self, cycle: Cycle) -> Status:
        pod = cycle.pod
        no_affinity = required_selector(pod) is None and self.added_required is None
        if no_affinity and not pod.node_selector:
            return SKIP
        raw_terms = raw_required_terms(pod)
        if not raw_terms:
            return SUCCESS
        bound = names_bound(raw_terms)
        if bound is not None and not bound:
            return unresolvable(REASON_CONFLICT)
        return SUCCESS

    def _filter_masks(self, cycle: Cycle) -> FilterMasks:
        masks: FilterMasks | None = cycle.state.get(_FILTER_KEY)
        if masks is None:
            snapshot = cycle.snapshot
            enforced = None
            if self.added_required is not None:
                enforced = terms_mask(snapshot, self.added_required)
            terms = required_terms(cycle.pod)
            raw_terms = raw_required_terms(cycle.pod)
            masks = FilterMasks(
                enforced=enforced,
                selector=match_labels(snapshot, cycle.pod.node_selector),
                terms=None if terms is None else [(t, term_mask(snapshot, t)) for t in terms],
                names_bound=names_bound(raw_terms) if raw_terms else None,
            )
            cycle.state[_FILTER_KEY] = masks
        return masks

    def filter(self, cycle: Cycle) -> FilterResult:
        masks = self._filter_masks(cycle)
        n = len(cycle.snapshot)
        failures = []
        if masks.enforced is not None:
            failures.append((~masks.enforced, unresolvable(REASON_ENFORCED)))
        failures.append((~masks.pod_match, unresolvable(REASON_POD)))
        return FilterResult.from_masks(n, failures)

    # -- score ------------------------------------------------------------------------------

    def _score_parts(self, snapshot: Snapshot, pod: Pod) -> ScoreParts:
        """Added terms first, then the pod's; raises on a pod term that fails to parse."""
        parts: list[tuple[str, WeightedTerm, BoolArray]] = [
            (_ADDED, w, term_mask(snapshot, w.term)) for w in self.added_preferred or ()
        ]
        pod_terms = preferred_terms(pod)
        if pod_terms is not None:
            terms, errors = pod_terms
            if errors:
                raise PluginError(aggregate_message(errors))
            parts.extend(("pod", w, term_mask(snapshot, w.term)) for w in terms)
        return ScoreParts(parts)

    def pre_score(self, cycle: Cycle, feasible: IntArray) -> Status:
        if not has_preferred(cycle.pod) and self.added_preferred is None:
            return SKIP
        try:
            cycle.state[_SCORE_KEY] = self._score_parts(cycle.snapshot, cycle.pod)
        except PluginError as exc:
            return error(str(exc))
        return SUCCESS

    def _cached_parts(self, cycle: Cycle) -> ScoreParts:
        parts: ScoreParts | None = cycle.state.get(_SCORE_KEY)
        if parts is None:  # PreScore disabled: upstream Score recomputes the same way
            parts = self._score_parts(cycle.snapshot, cycle.pod)
            cycle.state[_SCORE_KEY] = parts
        return parts

    def score(self, cycle: Cycle, feasible: IntArray) -> IntArray:
        total = self._cached_parts(cycle).total()
        if len(total) == 0:
            return np.zeros(len(feasible), dtype=np.int64)
        result: IntArray = total[feasible]
        return result

    def normalize(self, cycle: Cycle, scores: IntArray) -> IntArray:
        return default_normalize(scores, reverse=False)

    # -- explanation ------------------------------------------------------------------------

    def explain_columns(self, cycle: Cycle, nodes: IntArray) -> Values:
        """None everywhere when neither the pod nor the args select nodes; else node by node."""
        pod = cycle.pod
        selects = (
            pod.node_selector
            or self.added_required is not None
            or required_selector(pod) is not None
        )
        if not selects and self.added_preferred is None and not has_preferred(pod):
            return Table.constant(None, len(nodes))
        return super().explain_columns(cycle, nodes)

    def explain(self, cycle: Cycle, node: int) -> Mapping[str, Any] | None:
        """Why the node matches or not, and which preferred terms it earns (with weights)."""
        detail: dict[str, Any] = {}
        pod = cycle.pod
        if (
            pod.node_selector
            or self.added_required is not None
            or required_selector(pod) is not None
        ):
            detail.update(self._explain_filter(cycle, node))
        if self.added_preferred is not None or has_preferred(pod):
            try:
                parts = self._cached_parts(cycle)
            except PluginError as exc:
                detail["preferredTermsError"] = str(exc)
            else:
                detail["preferredTerms"] = [
                    {
                        "source": source,
                        "index": w.term.index,
                        "weight": w.weight,
                        "matched": bool(mask[node]),
                        "requirements": list(w.term.text),
                    }
                    for source, w, mask in parts.terms
                ]
        return detail or None

    def _explain_filter(self, cycle: Cycle, node: int) -> dict[str, Any]:
        masks = self._filter_masks(cycle)
        labels = cycle.snapshot.nodes[node].labels
        detail: dict[str, Any] = {}
        if masks.enforced is not None:
            detail["addedAffinityMatched"] = bool(masks.enforced[node])
        if cycle.pod.node_selector:
            detail["nodeSelectorMismatches"] = {
                key: labels.get(key)
                for key, value in cycle.pod.node_selector.items()
                if labels.get(key) != value
            }
        if masks.terms is not None:
            detail["requiredTerms"] = [
                {
                    "index": term.index,
                    "matched": bool(mask[node]),
                    "requirements": list(term.text),
                    # The node's value of each key the term's expressions read (None: no label).
                    "nodeLabels": {r.key: labels.get(r.key) for r in term.expressions},
                    **({"errors": [str(e) for e in term.errors]} if term.errors else {}),
                }
                for term, mask in masks.terms
            ]
            if masks.names_bound is not None:
                name = cycle.snapshot.node_names[node]
                detail["outsidePreFilterResult"] = name not in masks.names_bound
        return detail
