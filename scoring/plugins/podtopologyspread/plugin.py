"""PodTopologySpread (in-tree, Kubernetes 1.35 semantics), vectorized over nodes.

Upstream: pkg/scheduler/framework/plugins/podtopologyspread/{filtering.go,scoring.go,common.go,
plugin.go}.

- Constraints: the pod's own ``topologySpreadConstraints`` (DoNotSchedule ones for Filter,
  ScheduleAnyway ones for Score); a pod without any gets the default constraints
  (``defaultingType: System``: hostname maxSkew 3 and zone maxSkew 5, both ScheduleAnyway) with
  the selector of the Services and controller that select it, and none when nothing does.
- Counting: a node counts towards a constraint only when it has *every* constraint's topology
  key and passes the constraint's node inclusion policies (``nodeAffinityPolicy: Honor``, the
  default, means the pod's nodeSelector and required node affinity; ``nodeTaintsPolicy: Honor``
  means no untolerated NoSchedule/NoExecute taint). On such a node the pods of the incoming pod's
  namespace that the selector matches are counted, except terminating ones; an empty selector
  (``{}``) counts no pod at all (``countPodsMatchSelector``).
- Filter: a node without a constraint's topology key fails UnschedulableAndUnresolvable; a node
  where ``matching pods in its domain + self-match - global minimum > maxSkew`` fails
  Unschedulable. The global minimum is the smallest domain count, or 0 when there are fewer
  domains than ``minDomains``.
- Score: per constraint ``count * log(domains + 2) + maxSkew - 1`` summed and rounded, with
  ``count`` the domain's matching pods (for the hostname key, the node's own). Nodes missing a
  topology key are ignored (score 0) unless the constraints are the system defaults.
  NormalizeScore maps ``s`` to ``100 * (max + min - s) / max`` over the nodes not ignored.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scoring.framework import (
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
from scoring.goint import INT32_MAX
from scoring.objects import Pod
from scoring.plugins.nodeaffinity import required_terms
from scoring.plugins.podtopologyspread.constraints import (
    DO_NOT_SCHEDULE,
    HONOR,
    HOSTNAME,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    Constraint,
    default_constraints,
    parse_constraints,
)
from scoring.plugins.tainttoleration import tolerated
from scoring.podselectors import CountKey, matching_pods, pod_counts
from scoring.selectors import SelectorError, match_labels, terms_mask
from scoring.snapshot import BoolArray, IntArray, Snapshot

REASON_CONSTRAINTS = "node(s) didn't match pod topology spread constraints"
REASON_MISSING_LABEL = REASON_CONSTRAINTS + " (missing required label)"
_FILTER_KEY = "PreFilterPodTopologySpread"
_SCORE_KEY = "PreScorePodTopologySpread"
_NODE_MASKS_KEY = "PodTopologySpread/node-masks"
_DOMAINS_KEY = "PodTopologySpread/domains"
_EXPLAINED_KEY = "PodTopologySpread/explained"
_DO_NOT_SCHEDULE_TAINTS = ("NoSchedule", "NoExecute")
_EXPLAINED_PODS = 20  # matching pods named per domain in an explanation

FloatArray = np.ndarray[Any, np.dtype[np.float64]]


# -- node-side masks ----------------------------------------------------------------------------


@dataclass(frozen=True)
class NodeMasks:
    """Per node: matches the pod's required node affinity; has no untolerated hard taint.
    None means every node (the common case: no nodeSelector, no required affinity)."""

    affinity: BoolArray | None
    tolerated: BoolArray | None


def _node_masks(cycle: Cycle) -> NodeMasks:
    masks: NodeMasks | None = cycle.state.get(_NODE_MASKS_KEY)
    if masks is None:
        masks = NodeMasks(_affinity_mask(cycle), _tolerated_mask(cycle))
        cycle.state[_NODE_MASKS_KEY] = masks
    return masks


def _affinity_mask(cycle: Cycle) -> BoolArray | None:
    """``nodeaffinity.GetRequiredNodeAffinity(pod).Match``, parse errors ignored."""
    snapshot, pod = cycle.snapshot, cycle.pod
    terms = required_terms(pod)
    if not pod.node_selector and terms is None:
        return None
    affinity = match_labels(snapshot, pod.node_selector)
    if terms is not None:
        affinity &= terms_mask(snapshot, terms)
    return affinity


def _tolerated_mask(cycle: Cycle) -> BoolArray | None:
    snapshot, pod = cycle.snapshot, cycle.pod
    blocked = np.array(
        [
            any(
                t.effect in _DO_NOT_SCHEDULE_TAINTS
                and not tolerated(pod.tolerations, t, comparison_operators=False)
                for t in taints
            )
            for taints in snapshot.taint_sets
        ],
        dtype=bool,
    )
    if not blocked.any():
        return None
    result: BoolArray = ~blocked[snapshot.taint_set_ids]
    return result


def _included(cycle: Cycle, constraint: Constraint) -> BoolArray | None:
    """``matchNodeInclusionPolicies`` on every node (None: every node is included)."""
    masks = _node_masks(cycle)
    included: BoolArray | None = None
    if constraint.node_affinity_policy == HONOR and masks.affinity is not None:
        included = masks.affinity
    if constraint.node_taints_policy == HONOR and masks.tolerated is not None:
        included = masks.tolerated if included is None else included & masks.tolerated
    return included


def _and(mask: BoolArray, other: BoolArray | None) -> BoolArray:
    return mask if other is None else mask & other


def _count_key(pod: Pod, constraint: Constraint) -> CountKey:
    return CountKey(frozenset({pod.namespace}), constraint.selector, skip_terminating=True)


def _node_counts(snapshot: Snapshot, pod: Pod, constraint: Constraint) -> IntArray:
    """``countPodsMatchSelector`` on every node: an empty or null selector counts nothing.

    ``{}`` counting nothing is 1.35's behaviour (its ``selector.Empty()`` short-circuit, from
    kubernetes#116607); kubernetes#141339 reports it as a bug, fixed after 1.35 by #141340.
    """
    if not constraint.selector.requirements:
        return np.zeros(len(snapshot), dtype=np.int64)
    return pod_counts(snapshot, _count_key(pod, constraint))


def _has_keys(snapshot: Snapshot, constraints: Sequence[Constraint]) -> BoolArray:
    """``nodeLabelsMatchSpreadConstraints``: the node has every constraint's topology key."""
    masks = [_domain_indices(snapshot, c.topology_key)[1] for c in constraints]
    result = masks[0].copy()
    for mask in masks[1:]:
        result &= mask
    return result


# -- Filter state -------------------------------------------------------------------------------


@dataclass(frozen=True)
class HardConstraint:
    """One DoNotSchedule constraint's domains (``TpValueToMatchNum``) and global minimum."""

    constraint: Constraint
    codes: IntArray  # label value code per node, -1 without the key
    counted: BoolArray  # nodes whose pods count towards their domain
    domain_counts: IntArray  # matching pods per value code
    domains: BoolArray  # value codes that are domains
    min_match: int
    self_match: int

    def domain_count(self, node: int) -> int:
        code = int(self.codes[node])
        return int(self.domain_counts[code]) if code >= 0 else 0


@dataclass(frozen=True)
class FilterState:
    constraints: list[HardConstraint]


def _hard_constraint(cycle: Cycle, constraint: Constraint, has_keys: BoolArray) -> HardConstraint:
    snapshot = cycle.snapshot
    column = snapshot.label_column(constraint.topology_key)
    codes = column.codes.astype(np.int64)
    counted = _and(has_keys, _included(cycle, constraint))
    size = len(column.vocabulary) + 1  # the last slot stays 0: it is read for missing keys
    per_node = _node_counts(snapshot, cycle.pod, constraint)
    domain_counts = np.bincount(codes[counted], weights=per_node[counted], minlength=size)
    domains = np.bincount(codes[counted], minlength=size) > 0
    if int(domains.sum()) < constraint.min_domains:
        min_match = 0  # fewer domains than minDomains: the global minimum is 0
    else:
        min_match = int(domain_counts[domains].min()) if domains.any() else INT32_MAX
    return HardConstraint(
        constraint=constraint,
        codes=codes,
        counted=counted,
        domain_counts=domain_counts.astype(np.int64),
        domains=domains,
        min_match=min_match,
        self_match=int(constraint.selector.matches(cycle.pod.labels)),
    )


# -- Score state --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SoftConstraint:
    """One ScheduleAnyway constraint: its weight and the counts Score reads."""

    constraint: Constraint
    has_key: BoolArray  # per node
    domains: IntArray  # per node: its domain's index (a missing key reads as the value "")
    domain_counts: IntArray  # matching pods per domain (unused for the hostname key)
    node_counts: IntArray  # matching pods per node
    counted: BoolArray | None  # nodes whose pods count towards their domain (None: hostname)
    size: int  # the number of domains among the scored nodes
    weight: float  # topologyNormalizingWeight(size)
    everywhere: bool  # every node has the key (the score needs no mask)

    def counts(self, nodes: IntArray) -> IntArray:
        if self.constraint.topology_key == HOSTNAME:
            return self.node_counts[nodes]
        result: IntArray = self.domain_counts[self.domains[nodes]]
        return result


@dataclass(frozen=True)
class ScoreState:
    constraints: list[SoftConstraint]
    ignored: BoolArray  # per node: scored nodes lacking a topology key (score 0)
    feasible: IntArray  # the nodes PreScore was given (NormalizeScore's list)
    any_ignored: bool = False


def _domain_indices(snapshot: Snapshot, key: str) -> tuple[IntArray, BoolArray, int]:
    """Per node the domain index of ``node.Labels[key]``; Go reads a missing key as ``""``.

    Kept per snapshot until a Node changes (a plain-dict extension is dropped on node events).
    """
    cache: dict[str, tuple[IntArray, BoolArray, int]] = snapshot.extension(_DOMAINS_KEY, _new_dict)
    if key not in cache:
        column = snapshot.label_column(key)
        codes = column.codes.astype(np.int64)
        has_key = codes >= 0
        empty = column.vocabulary.get("", len(column.vocabulary))
        cache[key] = (np.where(has_key, codes, empty), has_key, len(column.vocabulary) + 1)
    return cache[key]


def _new_dict(_: Snapshot) -> dict[str, tuple[IntArray, BoolArray, int]]:
    return {}


def _soft_constraint(
    cycle: Cycle,
    constraint: Constraint,
    scored: IntArray,
    counted_nodes: BoolArray | None,
) -> SoftConstraint:
    """``scored``: indices of the feasible nodes not ignored; ``counted_nodes``: nodes whose
    pods may count (None: every node)."""
    snapshot = cycle.snapshot
    domains, has_key, size = _domain_indices(snapshot, constraint.topology_key)
    node_counts = _node_counts(snapshot, cycle.pod, constraint)
    domain_counts = np.zeros(size, dtype=np.int64)
    if constraint.topology_key == HOSTNAME:
        counted = None  # Score counts the node's own pods
        n_domains = len(scored)
    else:
        present = np.zeros(size, dtype=bool)
        present[domains[scored]] = True
        included = _included(cycle, constraint)
        counted = present[domains]
        for mask in (counted_nodes, included):
            if mask is not None:
                counted &= mask
        holding = np.flatnonzero(node_counts)  # only nodes with matching pods add anything
        holding = holding[counted[holding]]
        np.add.at(domain_counts, domains[holding], node_counts[holding])
        n_domains = int(present.sum())
    return SoftConstraint(
        constraint=constraint,
        has_key=has_key,
        domains=domains,
        domain_counts=domain_counts,
        node_counts=node_counts,
        counted=counted,
        size=n_domains,
        weight=math.log(n_domains + 2),  # topologyNormalizingWeight
        everywhere=bool(has_key.all()),
    )


def go_round(values: FloatArray) -> IntArray:
    """Go's ``math.Round``: halves away from zero (numpy's ``round`` goes to even)."""
    whole = np.trunc(values)
    step = (np.abs(values - whole) >= 0.5) * np.sign(values)
    result: IntArray = (whole + step).astype(np.int64)
    return result


# -- the plugin ---------------------------------------------------------------------------------


class PodTopologySpread(Plugin):
    """Spread pods across topology domains: hard constraints filter, soft ones score."""

    name = "PodTopologySpread"
    points = frozenset({"preFilter", "filter", "preScore", "score"})
    normalizes = True
    # Counts come from pods on every node of a domain: a placement on one node changes the
    # verdict on others, so results are never cached (depends_on stays None).

    def __init__(self, args: Mapping[str, Any]) -> None:
        super().__init__(args)
        self.system_defaulted = args.get("defaultingType", "System") == "System"
        self.defaults: tuple[Mapping[str, Any], ...] = (
            SYSTEM_DEFAULT_CONSTRAINTS
            if self.system_defaulted
            else tuple(args.get("defaultConstraints") or ())
        )

    def constraints(self, cycle: Cycle, action: str) -> list[Constraint]:
        """``getConstraints`` / ``initPreScoreState``: the pod's own, else the defaults."""
        pod = cycle.pod
        if pod.topology_spread_constraints:
            path = "spec.topologySpreadConstraints"
            return parse_constraints(pod.topology_spread_constraints, pod, action, path)
        objects = cycle.snapshot.cluster_objects
        return default_constraints(pod, self.defaults, objects, action)

    # -- filter -----------------------------------------------------------------------------

    def pre_filter(self, cycle: Cycle) -> Status:
        try:
            constraints = self.constraints(cycle, DO_NOT_SCHEDULE)
        except SelectorError as exc:
            which = "pod's hard" if cycle.pod.topology_spread_constraints else "default hard"
            verb = "obtaining" if cycle.pod.topology_spread_constraints else "setting"
            return error(
                f"get constraints from pod: {verb} {which} topology spread constraints: {exc}"
            )
        if not constraints:
            return SKIP
        has_keys = _has_keys(cycle.snapshot, constraints)
        cycle.state[_FILTER_KEY] = FilterState(
            [_hard_constraint(cycle, c, has_keys) for c in constraints]
        )
        return SUCCESS

    def filter(self, cycle: Cycle) -> FilterResult:
        state: FilterState | None = cycle.state.get(_FILTER_KEY)
        n = len(cycle.snapshot)
        if state is None:  # PreFilter skipped: no hard constraint
            return FilterResult.success(n)
        failures: list[tuple[BoolArray, Status]] = []
        for hard in state.constraints:
            missing = hard.codes < 0
            matched = hard.domain_counts[hard.codes]  # -1 reads the empty last slot
            skew = matched + hard.self_match - hard.min_match
            failures.append((missing, unresolvable(REASON_MISSING_LABEL)))
            failures.append(
                (~missing & (skew > hard.constraint.max_skew), unschedulable(REASON_CONSTRAINTS))
            )
        return FilterResult.from_masks(n, failures)

    # -- score ------------------------------------------------------------------------------

    def pre_score(self, cycle: Cycle, feasible: IntArray) -> Status:
        snapshot = cycle.snapshot
        if len(snapshot) == 0:
            return SKIP
        try:
            constraints = self.constraints(cycle, SCHEDULE_ANYWAY)
        except SelectorError as exc:
            which = (
                "obtaining pod's" if cycle.pod.topology_spread_constraints else "setting default"
            )
            return error(
                f"calculating preScoreState: {which} soft topology spread constraints: {exc}"
            )
        if not constraints:
            return SKIP
        # Only non-default constraints require every topology key (nodes without a zone label
        # still get hostname spreading under the system defaults).
        require_all = bool(cycle.pod.topology_spread_constraints) or not self.system_defaulted
        ignored = np.zeros(len(snapshot), dtype=bool)
        scored, counted_nodes = feasible, None
        if require_all:
            has_keys = _has_keys(snapshot, constraints)
            ignored[feasible] = ~has_keys[feasible]
            scored, counted_nodes = feasible[has_keys[feasible]], has_keys
        cycle.state[_SCORE_KEY] = ScoreState(
            [_soft_constraint(cycle, c, scored, counted_nodes) for c in constraints],
            ignored,
            feasible,
            bool(ignored.any()),
        )
        return SUCCESS

    def _score_state(self, cycle: Cycle) -> ScoreState:
        state: ScoreState | None = cycle.state.get(_SCORE_KEY)
        if state is None:
            raise PluginError(f'error reading "{_SCORE_KEY}" from cycleState: not found')
        return state

    def score(self, cycle: Cycle, feasible: IntArray) -> IntArray:
        state = self._score_state(cycle)
        total = np.zeros(len(feasible), dtype=np.float64)
        for soft in state.constraints:
            part = soft.counts(feasible) * soft.weight + float(soft.constraint.max_skew - 1)
            total += part if soft.everywhere else np.where(soft.has_key[feasible], part, 0.0)
        raw = go_round(total)
        if state.any_ignored:
            raw[state.ignored[feasible]] = 0
        return raw

    def normalize(self, cycle: Cycle, scores: IntArray) -> IntArray:
        state = self._score_state(cycle)
        skip = state.ignored[state.feasible]  # ``scores`` is aligned with PreScore's nodes
        kept = scores[~skip] if state.any_ignored else scores
        if len(kept) == 0:
            return np.zeros_like(scores)
        low, high = int(kept.min()), int(kept.max())
        # MaxNodeScore * (max + min - s) / max; every score 100 when the maximum is 0
        result = np.full_like(scores, 100) if high == 0 else 100 * (high + low - scores) // high
        result[skip] = 0
        return result

    # -- explanation ------------------------------------------------------------------------

    explained_by = (_FILTER_KEY, _SCORE_KEY)

    def explain(self, cycle: Cycle, node: int) -> Mapping[str, Any] | None:
        """Per constraint: the node's domain, its matching pods (named), the skew or score."""
        detail: dict[str, Any] = {}
        hard: FilterState | None = cycle.state.get(_FILTER_KEY)
        if hard is not None:
            detail["hardConstraints"] = [
                self._explain_hard(cycle, h, node) for h in hard.constraints
            ]
        soft: ScoreState | None = cycle.state.get(_SCORE_KEY)
        if soft is not None:
            detail["ignoredForScore"] = bool(soft.ignored[node])
            detail["softConstraints"] = [
                self._explain_soft(cycle, s, node) for s in soft.constraints
            ]
        return detail or None

    def _domain_pods(
        self,
        cycle: Cycle,
        constraint: Constraint,
        memo: tuple[str, int, int],
        members: Callable[[], IntArray],
    ) -> list[str]:
        """Up to 20 matching pods of a domain, found once per domain (every node of a zone
        shows the same list)."""
        if not constraint.selector.requirements:
            return []
        found: dict[tuple[str, int, int], list[str]] = cycle.state.setdefault(_EXPLAINED_KEY, {})
        if memo not in found:
            key = _count_key(cycle.pod, constraint)
            nodes = members().tolist()
            found[memo] = [
                p.key for p in matching_pods(cycle.snapshot, key, nodes, _EXPLAINED_PODS)
            ]
        return found[memo]

    def _explain_hard(self, cycle: Cycle, hard: HardConstraint, node: int) -> dict[str, Any]:
        c = hard.constraint
        entry: dict[str, Any] = {
            "constraint": c.index,
            "topologyKey": c.topology_key,
            "maxSkew": c.max_skew,
            "minDomains": c.min_domains,
            "selector": c.selector.text(),
            "domains": int(hard.domains.sum()),
            "globalMinimum": hard.min_match,
            "selfMatch": bool(hard.self_match),
        }
        code = int(hard.codes[node])
        if code < 0:
            entry["domain"] = None
            return entry
        value = _value(cycle.snapshot, c.topology_key, code)
        count = hard.domain_count(node)
        memo = ("hard", c.index, code)
        entry.update(
            domain=f"{c.topology_key}={value}",
            matchingPods=count,
            skew=count + hard.self_match - hard.min_match,
            matchedPods=self._domain_pods(
                cycle, c, memo, lambda: np.flatnonzero(hard.counted & (hard.codes == code))
            ),
        )
        return entry

    def _explain_soft(self, cycle: Cycle, soft: SoftConstraint, node: int) -> dict[str, Any]:
        c = soft.constraint
        entry: dict[str, Any] = {
            "constraint": c.index,
            "topologyKey": c.topology_key,
            "maxSkew": c.max_skew,
            "selector": c.selector.text(),
            "domains": soft.size,
            "weight": soft.weight,
        }
        if not soft.has_key[node]:
            entry["domain"] = None
            return entry
        nodes = np.array([node], dtype=np.int64)
        count = int(soft.counts(nodes)[0])
        domain = int(soft.domains[node])
        hostname = c.topology_key == HOSTNAME
        memo = ("host", c.index, node) if hostname else ("soft", c.index, domain)
        entry.update(
            domain=f"{c.topology_key}={cycle.snapshot.nodes[node].labels[c.topology_key]}",
            matchingPods=count,
            contribution=count * soft.weight + (c.max_skew - 1),
            matchedPods=self._domain_pods(
                cycle,
                c,
                memo,
                (lambda: nodes)
                if hostname
                else (lambda: np.flatnonzero(_and(soft.domains == domain, soft.counted))),
            ),
        )
        return entry


def _value(snapshot: Snapshot, key: str, code: int) -> str:
    vocabulary = snapshot.label_column(key).vocabulary
    return next(v for v, k in vocabulary.items() if k == code)
