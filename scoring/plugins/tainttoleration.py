"""TaintToleration (in-tree, Kubernetes 1.35 semantics).

Upstream: pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go and
k8s.io/component-helpers/scheduling/corev1/helpers.go (``FindMatchingUntoleratedTaint``,
``TolerationsTolerateTaint``) over ``Toleration.ToleratesTaint`` (k8s.io/api/core/v1).

- Filter: the first NoSchedule/NoExecute taint (in node order) no toleration tolerates fails the
  node, UnschedulableAndUnresolvable. Since 1.34 the reason no longer names the taint.
- Score: the number of PreferNoSchedule taints not tolerated by the pod's tolerations whose
  effect is PreferNoSchedule or empty; NormalizeScore is ``DefaultNormalizeScore`` reversed.

Nodes share few distinct taint sets, so every verdict is computed once per set
(``snapshot.taint_sets``) and spread to nodes through ``snapshot.taint_set_ids``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from scoring.columnar.values import Table, Values
from scoring.framework import (
    SUCCESS,
    Cycle,
    FilterResult,
    Plugin,
    PluginError,
    Status,
    default_normalize,
    unresolvable,
)
from scoring.goint import int64_or_none
from scoring.objects import Taint, Toleration
from scoring.snapshot import NODE_EVENT, IntArray

REASON = "node(s) had untolerated taint(s)"
PRE_SCORE_KEY = "PreScoreTaintToleration"
_VERDICTS_KEY = "TaintToleration/verdicts"
_DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")
_PREFER_NO_SCHEDULE = "PreferNoSchedule"


# -- toleration matching ----------------------------------------------------------------------


def _canonical_int64(text: str) -> int | None:
    """``content.IsDecimalInteger`` then ``ParseInt``: "0" or -?[1-9][0-9]*, in int64 range."""
    digits = text[1:] if text.startswith("-") else text
    if not digits.isascii() or not digits.isdigit() or text == "-0":
        return None
    if len(digits) > 1 and digits[0] == "0":
        return None
    value = int(text)
    return int64_or_none(value)


def tolerates(toleration: Toleration, taint: Taint, *, comparison_operators: bool) -> bool:
    """``Toleration.ToleratesTaint`` (1.35) including the ``Lt``/``Gt`` comparison operators.

    ``comparison_operators`` is the TaintTolerationComparisonOperators gate (alpha in 1.35, off
    by default); with it off, ``Lt``/``Gt`` tolerate nothing. ``Gt`` tolerates a taint whose
    value is greater than the toleration's (``taint > toleration``), ``Lt`` a smaller one; both
    values must be canonical decimal integers.
    """
    if toleration.operator not in ("Lt", "Gt"):
        return toleration.tolerates(taint)
    if not comparison_operators:
        return False
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    bound = _canonical_int64(toleration.value)
    value = _canonical_int64(taint.value)
    if bound is None or value is None:
        return False
    return value > bound if toleration.operator == "Gt" else value < bound


def tolerated(
    tolerations: Iterable[Toleration], taint: Taint, *, comparison_operators: bool
) -> bool:
    """``TolerationsTolerateTaint``: any toleration tolerates the taint."""
    return any(tolerates(t, taint, comparison_operators=comparison_operators) for t in tolerations)


def prefer_no_schedule_tolerations(tolerations: Iterable[Toleration]) -> tuple[Toleration, ...]:
    """``getAllTolerationPreferNoSchedule``: effect PreferNoSchedule or empty (all effects)."""
    return tuple(t for t in tolerations if t.effect in ("", _PREFER_NO_SCHEDULE))


def taint_text(taint: Taint) -> str:
    """``Taint.ToString``: ``key=value:Effect`` (``key:Effect`` without a value)."""
    if not taint.value:
        return f"{taint.key}:{taint.effect}"
    return f"{taint.key}={taint.value}:{taint.effect}"


# -- per-taint-set verdicts -------------------------------------------------------------------


@dataclass(frozen=True)
class TaintSetVerdict:
    """One distinct taint set against the pod: what blocks it and what it prefers against."""

    untolerated: tuple[Taint, ...]  # NoSchedule/NoExecute taints no toleration tolerates
    intolerable_preferred: tuple[Taint, ...]  # PreferNoSchedule taints counted by Score


def _verdict(
    taints: Sequence[Taint],
    tolerations: Sequence[Toleration],
    preferred: Sequence[Toleration],
    comparison_operators: bool,
) -> TaintSetVerdict:
    untolerated = tuple(
        t
        for t in taints
        if t.effect in _DO_NOT_SCHEDULE
        and not tolerated(tolerations, t, comparison_operators=comparison_operators)
    )
    intolerable = tuple(
        t
        for t in taints
        if t.effect == _PREFER_NO_SCHEDULE
        and not tolerated(preferred, t, comparison_operators=comparison_operators)
    )
    return TaintSetVerdict(untolerated, intolerable)


class TaintToleration(Plugin):
    """Keep pods off nodes whose taints they do not tolerate; prefer fewer PreferNoSchedule."""

    name = "TaintToleration"
    points = frozenset({"filter", "preScore", "score"})
    depends_on = frozenset({NODE_EVENT})
    normalizes = True
    # TaintTolerationComparisonOperators (KEP-5471): alpha and off by default in 1.35.
    comparison_operators: ClassVar[bool] = False

    def _verdicts(self, cycle: Cycle) -> list[TaintSetVerdict]:
        verdicts: list[TaintSetVerdict] | None = cycle.state.get(_VERDICTS_KEY)
        if verdicts is None:
            tolerations = cycle.pod.tolerations
            preferred = prefer_no_schedule_tolerations(tolerations)
            verdicts = [
                _verdict(taints, tolerations, preferred, self.comparison_operators)
                for taints in cycle.snapshot.taint_sets
            ]
            cycle.state[_VERDICTS_KEY] = verdicts
        return verdicts

    def filter(self, cycle: Cycle) -> FilterResult:
        blocked = np.array([bool(v.untolerated) for v in self._verdicts(cycle)], dtype=bool)
        snapshot = cycle.snapshot
        failing = blocked[snapshot.taint_set_ids]
        return FilterResult.from_masks(len(snapshot), [(failing, unresolvable(REASON))])

    def pre_score(self, cycle: Cycle, feasible: IntArray) -> Status:
        cycle.state[PRE_SCORE_KEY] = prefer_no_schedule_tolerations(cycle.pod.tolerations)
        return SUCCESS

    def score(self, cycle: Cycle, feasible: IntArray) -> IntArray:
        """``countIntolerableTaintsPreferNoSchedule`` for each feasible node."""
        if PRE_SCORE_KEY not in cycle.state:  # Score without PreScore fails upstream too
            raise PluginError(f'failed to read "{PRE_SCORE_KEY}" from cycleState: not found')
        counts = np.array(
            [len(v.intolerable_preferred) for v in self._verdicts(cycle)], dtype=np.int64
        )
        if len(feasible) == 0:
            return np.zeros(0, dtype=np.int64)
        result: IntArray = counts[cycle.snapshot.taint_set_ids[feasible]]
        return result

    def normalize(self, cycle: Cycle, scores: IntArray) -> IntArray:
        return default_normalize(scores, reverse=True)

    def explain_columns(self, cycle: Cycle, nodes: IntArray) -> Values:
        """One detail per taint set (none for a node without taints)."""
        snapshot = cycle.snapshot
        verdicts = self._verdicts(cycle)
        table = [
            {
                "taints": [taint_text(t) for t in taints],
                "untolerated": [taint_text(t) for t in verdicts[k].untolerated],
                "intolerablePreferNoSchedule": [
                    taint_text(t) for t in verdicts[k].intolerable_preferred
                ],
            }
            if taints
            else None
            for k, taints in enumerate(snapshot.taint_sets)
        ]
        return Table(snapshot.taint_set_ids[nodes], table)

    def explain(self, cycle: Cycle, node: int) -> Mapping[str, Any] | None:
        """Which taints block the node (upstream reports the first) and which cost score."""
        set_id = int(cycle.snapshot.taint_set_ids[node])
        if not cycle.snapshot.taint_sets[set_id]:
            return None
        verdict = self._verdicts(cycle)[set_id]
        return {
            "taints": [taint_text(t) for t in cycle.snapshot.taint_sets[set_id]],
            "untolerated": [taint_text(t) for t in verdict.untolerated],
            "intolerablePreferNoSchedule": [taint_text(t) for t in verdict.intolerable_preferred],
        }
