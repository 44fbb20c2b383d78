"""Propose fixes for a pod the engine cannot place and keep those the engine confirms."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import numpy as np

from scoring.advisor import nodes, pod_spec, requests, thresholds
from scoring.advisor.blockers import Blockers
from scoring.advisor.fix import KINDS, LISTED_NODES, TARGETS, Candidate, Fix
from scoring.advisor.merge_patch import apply_merge_patch
from scoring.advisor.pending import PendingPods
from scoring.decision import Decision
from scoring.engine import Engine, Framework
from scoring.errors import InputError
from scoring.objects import parse_pod
from scoring.plugins.loadaware.args import PLUGIN_NAME as LOADAWARE
from scoring.plugins.loadaware.plugin import LoadAwareScheduling
from scoring.snapshot import Snapshot

MAX_FIXES = 10
KEPT_PER_KIND = 2  # confirmed pod fixes of one kind: the smallest change and the next
KEPT_PER_NODE_KIND = 1  # a node fix touches the one node that needs the least

POD_KINDS: list[Callable[[Blockers], list[Candidate]]] = [
    requests.candidates,
    pod_spec.toleration_candidates,
    pod_spec.node_selector_candidates,
    pod_spec.node_affinity_candidates,
    pod_spec.pod_affinity_candidates,
    pod_spec.spread_candidates,
]
NODE_KINDS: list[Callable[[Blockers], list[Candidate]]] = [
    nodes.label_candidates,
    nodes.untaint_candidates,
    nodes.capacity_candidates,
]


def advise(engine: Engine, decision: Decision, now: datetime | None = None) -> list[Fix]:
    """Confirmed fixes for the pod of ``decision`` (made by ``engine``), smallest change first,
    at most :data:`MAX_FIXES`; empty when the decision placed the pod."""
    if decision.selected_index is not None or decision.error is not None:
        return []
    advisor = _Advisor(engine, decision, now or decision.cycle.now)
    fixes = [*advisor.pod_fixes(), *advisor.policy_fixes(), *advisor.node_fixes()]
    return _ordered(fixes)[:MAX_FIXES]


def _ordered(fixes: list[Fix]) -> list[Fix]:
    """Each kind's smallest change first, then each kind's next one: the first fixes are
    the different ways out, each at its smallest. Within a round, by the size of the change,
    then pod before policy before node."""
    rank: dict[str, int] = {}
    keyed = []
    for fix in sorted(fixes, key=lambda f: f.candidate.cost):
        round_ = rank[fix.kind] = rank.get(fix.kind, -1) + 1
        key = (round_, fix.candidate.cost, TARGETS.index(fix.target), KINDS.index(fix.kind))
        keyed.append((key, fix))
    return [fix for _, fix in sorted(keyed, key=lambda item: item[0])]


class _Advisor:
    def __init__(self, engine: Engine, decision: Decision, now: datetime) -> None:
        self.engine = engine
        self.decision = decision
        self.now = now
        self.pod = decision.cycle.pod
        self.snapshot = decision.cycle.snapshot
        self.framework = engine.framework_for(self.pod)
        self.blockers = Blockers.of(decision)
        self.pending = PendingPods(engine, self.snapshot, self.pod, now)

    def pod_fixes(self) -> list[Fix]:
        out = []
        for propose in POD_KINDS:
            out.extend(_first(propose(self.blockers), self._check_pod))
        return out

    def _check_pod(self, candidate: Candidate) -> Fix | None:
        try:
            changed = parse_pod(apply_merge_patch(self.pod.raw, candidate.patch))
        except InputError:
            return None
        return _confirmed(candidate, self.framework.evaluate(changed, self.snapshot, self.now))

    def policy_fixes(self) -> list[Fix]:
        by_setting: dict[tuple[str, str], list[Candidate]] = {}
        changes = {}
        for change in thresholds.changes(self.blockers):
            candidate = Candidate(
                kind="loadaware-threshold",
                target="policy",
                summary=(
                    f"Raise LoadAware {change.field}.{change.resource} of profile "
                    f"{change.profile} from {change.current} to {change.value}."
                ),
                patch=change.patch,
                cost=(1, (change.value - change.current) / 100),
            )
            changes[id(candidate)] = change
            by_setting.setdefault((change.field, change.resource), []).append(candidate)

        def check(candidate: Candidate) -> Fix | None:
            change = changes[id(candidate)]
            args = change.args(self.framework.profile.plugin_args.get(LOADAWARE, {}))
            framework = self.framework.with_plugin_args(LOADAWARE, args)
            with self.snapshot.transient_extensions():
                _share_loadaware_state(self.decision, framework)
                fix = _confirmed(candidate, framework.evaluate(self.pod, self.snapshot, self.now))
                if fix is None:
                    return None
                placed = self.pending.unblocked({framework.name: framework}, self.snapshot)
                return _with_unblocks(fix, placed)

        out = []
        for candidates in by_setting.values():
            out.extend(_first(candidates, check, kept=1))
        return out

    def node_fixes(self) -> list[Fix]:
        def check(candidate: Candidate) -> Fix | None:
            variant = self._variant(candidate)
            fix = _confirmed(candidate, self.framework.evaluate(self.pod, variant, self.now))
            if fix is None:
                return None
            changed = np.array(
                sorted({self.snapshot.index[n] for n in [*candidate.patch, *candidate.evict]}),
                dtype=np.int64,
            )
            placed = self.pending.unblocked(self.engine.frameworks, variant, changed)
            return _with_unblocks(fix, placed)

        out = []
        for propose in NODE_KINDS:
            out.extend(_first(propose(self.blockers), check, kept=KEPT_PER_NODE_KIND))
        return out

    def _variant(self, candidate: Candidate) -> Snapshot:
        """The snapshot with the candidate's node patches applied and its pods moved away (the
        cached snapshot itself is shared and stays as it is)."""
        snapshot = self.snapshot
        nodes = [
            apply_merge_patch(snapshot.nodes[snapshot.index[name]].raw, patch)
            for name, patch in candidate.patch.items()
        ]
        removed = []
        for name, keys in candidate.evict.items():
            home = snapshot.index[name]
            removed += [(p, home) for p in snapshot.pods_on_node[home] if p.key in keys]
        return snapshot.variant(nodes, removed)


def _share_loadaware_state(decision: Decision, framework: Framework) -> None:
    """The changed framework's LoadAware state, made from the decision's (thresholds only)."""
    base, changed = decision.plugins.get(LOADAWARE), framework.instances.get(LOADAWARE)
    if isinstance(base, LoadAwareScheduling) and isinstance(changed, LoadAwareScheduling):
        changed.share_state(decision.cycle, base)


def _first(
    candidates: list[Candidate], check: Callable[[Candidate], Fix | None], kept: int = KEPT_PER_KIND
) -> list[Fix]:
    """The first ``kept`` candidates the engine confirms, smallest change first."""
    out = []
    for candidate in sorted(candidates, key=lambda c: c.cost):
        fix = check(candidate)
        if fix is not None:
            out.append(fix)
            if len(out) >= kept:
                break
    return out


def _confirmed(candidate: Candidate, decision: Decision) -> Fix | None:
    if decision.selected_index is None:
        return None
    names = decision.cycle.snapshot.node_names
    ranked = [names[i] for i in decision.ranking[:LISTED_NODES]]
    return Fix(candidate, ranked, len(decision.feasible))


def _with_unblocks(fix: Fix, unblocks: int) -> Fix:
    return Fix(fix.candidate, fix.nodes, fix.feasible, unblocks)


__all__ = ["MAX_FIXES", "advise"]
