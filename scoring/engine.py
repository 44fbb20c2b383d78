"""Run a profile's plugins over a snapshot and produce an explained :class:`Decision`.

Semantics (see the engine CLI contract): every filter runs on every node and every result is
kept (kube-scheduler stops at a node's first failure); scores run on feasible nodes only;
NormalizeScore, then ``weighted = normalized * weight``; the highest total wins and ties go to
the name that sorts first. Every node is evaluated (no ``percentageOfNodesToScore`` sampling).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from scoring import plugins
from scoring.config import PluginRef, Profile, SchedulerConfiguration, default_configuration
from scoring.decision import Decision, FilterOutcome, ScoreOutcome, SkippedPlugin
from scoring.errors import InputError
from scoring.framework import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    Code,
    Cycle,
    FilterResult,
    Plugin,
    PluginError,
)
from scoring.objects import Pod
from scoring.snapshot import IntArray, Snapshot
from scoring.timeutil import now as clock_now

# Extension points whose plugins the engine runs; others only matter for config validation.
_EVALUATED_POINTS = ("preFilter", "filter", "preScore", "score", "reserve")


class ResultCache(Protocol):
    """Stands in for ``plugin.filter`` / ``plugin.score`` with reused results (same values).

    ``scoring.simulation.cache`` implements it per equivalence class of pods.
    """

    def filter(self, plugin: Plugin, cycle: Cycle) -> FilterResult: ...

    def score(self, plugin: Plugin, cycle: Cycle, feasible: IntArray) -> IntArray: ...


@dataclass(frozen=True)
class _Scored:
    plugin: Plugin
    weight: int


class Framework:
    """One profile's instantiated plugins (kube-scheduler's ``frameworkImpl``)."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.instances: dict[str, Plugin] = {}
        self.skipped: dict[str, str] = {}
        for point in _EVALUATED_POINTS:
            for ref in profile.plugins.get(point, ()):
                self._instantiate(ref)
        self.pre_filters = self._at("preFilter")
        self.filters = self._at("filter")
        self.pre_scores = self._at("preScore")
        self.scores = [
            _Scored(self.instances[r.name], r.weight)
            for r in profile.plugins.get("score", ())
            if r.name in self.instances
        ]
        self.reservers = self._at("reserve")
        self.skipped_plugins = self._skipped_plugins()

    @property
    def name(self) -> str:
        return self.profile.scheduler_name

    @property
    def unmodeled_scorers(self) -> list[str]:
        """Score plugins the engine skips: upstream adds their weighted scores, we cannot."""
        return [s.plugin for s in self.skipped_plugins if s.may_rank]

    def _instantiate(self, ref: PluginRef) -> None:
        if ref.name in self.instances or ref.name in self.skipped:
            return
        cls = plugins.plugin_class(ref.name, self.profile.kubernetes_minor)
        if cls is None:
            self.skipped[ref.name] = plugins.skip_reason(ref.name)
            return
        self.instances[ref.name] = cls(self.profile.plugin_args.get(ref.name, {}))

    def _skipped_plugins(self) -> list[SkippedPlugin]:
        """Every unmodelled plugin with the evaluated points it is enabled at and its weight."""
        out: list[SkippedPlugin] = []
        for name, reason in self.skipped.items():
            points = tuple(
                point for point in _EVALUATED_POINTS if name in self.profile.plugin_names(point)
            )
            weight = next(
                (r.weight for r in self.profile.plugins.get("score", ()) if r.name == name), None
            )
            constant = name in plugins.CONSTANT_SCORERS
            out.append(SkippedPlugin(name, reason, points, weight, constant))
        return out

    def _at(self, point: str) -> list[Plugin]:
        return [
            self.instances[r.name]
            for r in self.profile.plugins.get(point, ())
            if r.name in self.instances and point in self.instances[r.name].points
        ]

    def evaluate(
        self,
        pod: Pod,
        snapshot: Snapshot,
        now: datetime | None = None,
        cache: ResultCache | None = None,
    ) -> Decision:
        """Filter and score ``pod`` on every node of ``snapshot`` (through ``cache`` if given)."""
        cycle = Cycle(pod, snapshot, now or clock_now())
        filters = self._run_filters(cycle, cache)
        passed = np.ones(len(snapshot), dtype=bool)
        for outcome in filters:
            passed &= outcome.result.passed
        feasible: IntArray = np.flatnonzero(passed).astype(np.int64)
        scores, error, pre_score_skipped = self._run_scores(cycle, feasible, cache)
        return Decision(
            cycle=cycle,
            profile=self.name,
            filters=filters,
            feasible=feasible,
            scores=scores,
            error=error,
            skipped=list(self.skipped_plugins),
            plugins=self.instances,
            pre_score_skipped=pre_score_skipped,
        )

    def feasible(
        self,
        pod: Pod,
        snapshot: Snapshot,
        now: datetime | None = None,
        nodes: IntArray | None = None,
    ) -> IntArray:
        """The nodes of ``nodes`` (all when None) every filter passes for ``pod``, without
        scoring: whether a pod can be placed at all, asked of many pods at once (what a change
        unblocks). Each filter after the first asks only the nodes still passing
        (``filter_nodes``), and none once no node is left."""
        cycle = Cycle(pod, snapshot, now or clock_now())
        skip: set[str] = set()
        for plugin in self.pre_filters:
            status = plugin.pre_filter(cycle)
            if status.code == Code.SKIP:
                skip.add(plugin.name)
            elif not status.ok:
                return np.zeros(0, dtype=np.int64)
        left: IntArray | None = nodes
        for plugin in self.filters:
            if plugin.name in skip:
                continue
            if left is None:
                left = np.flatnonzero(plugin.filter(cycle).passed).astype(np.int64)
            else:
                left = left[plugin.filter_nodes(cycle, left).passed]
            if len(left) == 0:
                break
        return np.arange(len(snapshot), dtype=np.int64) if left is None else left

    def with_plugin_args(self, plugin: str, args: Mapping[str, Any]) -> Framework:
        """This profile with ``plugin``'s args replaced (a what-if of one setting)."""
        plugin_args = {**self.profile.plugin_args, plugin: args}
        return Framework(replace(self.profile, plugin_args=plugin_args))

    def _run_filters(self, cycle: Cycle, cache: ResultCache | None) -> list[FilterOutcome]:
        n = len(cycle.snapshot)
        rejected: dict[str, FilterResult] = {}
        skip_filter: set[str] = set()
        for plugin in self.pre_filters:
            status = plugin.pre_filter(cycle)
            if status.code == Code.SKIP:
                skip_filter.add(plugin.name)
            elif not status.ok:
                # A PreFilter rejection fails the pod on every node with that status.
                rejected[plugin.name] = FilterResult.uniform(n, status)
        outcomes = []
        for plugin in self.filters:
            if plugin.name in rejected:
                result = rejected.pop(plugin.name)
            elif plugin.name in skip_filter:
                result = FilterResult.success(n)
            else:
                result = plugin.filter(cycle) if cache is None else cache.filter(plugin, cycle)
            outcomes.append(FilterOutcome(plugin.name, result))
        # PreFilter-only plugins that rejected the pod still need reporting.
        outcomes.extend(FilterOutcome(name, result) for name, result in rejected.items())
        return outcomes

    def _run_scores(
        self, cycle: Cycle, feasible: IntArray, cache: ResultCache | None
    ) -> tuple[list[ScoreOutcome], str | None, list[tuple[str, int]]]:
        """The score outcomes, the cycle's error, and the score plugins (with weights) whose
        PreScore returned Skip, so that upstream does not run their Score for this pod."""
        if len(feasible) == 0:
            return [], None, []
        skipped: set[str] = set()
        for pre_scorer in self.pre_scores:
            status = pre_scorer.pre_score(cycle, feasible)
            if status.code == Code.SKIP:
                skipped.add(pre_scorer.name)
            elif not status.ok:  # RunPreScorePlugins (pkg/scheduler/framework/runtime)
                return [], f'running PreScore plugin "{pre_scorer.name}": {status.message}', []
        skipped_scores = [
            (s.plugin.name, s.weight) for s in self.scores if s.plugin.name in skipped
        ]
        outcomes: list[ScoreOutcome] = []
        for scored in self.scores:
            plugin = scored.plugin
            if plugin.name in skipped:
                continue
            try:
                raw = (
                    plugin.score(cycle, feasible)
                    if cache is None
                    else cache.score(plugin, cycle, feasible)
                )
            except PluginError as exc:  # RunScorePlugins
                message = f'running Score plugins: plugin "{plugin.name}" failed with: {exc}'
                return outcomes, message, skipped_scores
            normalized = plugin.normalize(cycle, raw.copy()) if plugin.normalizes else raw
            bad = (normalized < MIN_NODE_SCORE) | (normalized > MAX_NODE_SCORE)
            if bad.any():
                value = int(normalized[np.flatnonzero(bad)[0]])
                message = (
                    f"plugin {plugin.name!r} returns an invalid score {value}, "
                    "it should in the range of [0, 100] after normalizing"
                )
                return outcomes, message, skipped_scores
            outcomes.append(ScoreOutcome(plugin.name, raw, normalized, scored.weight))
        return outcomes, None, skipped_scores

    def reserve(self, decision: Decision) -> None:
        """Reserve the decision's selected node: account the pod, then plugin Reserve hooks."""
        node = decision.selected_index
        if node is None:
            raise ValueError("cannot reserve: the decision selected no node")
        decision.cycle.snapshot.assume_pod(decision.cycle.pod, node)
        for plugin in self.reservers:
            plugin.reserve(decision.cycle, node)


class Engine:
    """A scheduler configuration ready to evaluate pods: one :class:`Framework` per profile."""

    def __init__(self, config: SchedulerConfiguration | None = None) -> None:
        self.config = config or default_configuration()
        self.frameworks = {p.scheduler_name: Framework(p) for p in self.config.profiles}

    def framework_for(self, pod: Pod) -> Framework:
        """The profile named by ``spec.schedulerName``; a clear error when none matches."""
        framework = self.frameworks.get(pod.scheduler_name)
        if framework is None:
            known = ", ".join(sorted(self.frameworks))
            raise InputError(
                f"Pod {pod.key}: spec.schedulerName: no profile named {pod.scheduler_name!r} "
                f"in the configuration (profiles: {known})"
            )
        return framework

    def evaluate(self, pod: Pod, snapshot: Snapshot, now: datetime | None = None) -> Decision:
        return self.framework_for(pod).evaluate(pod, snapshot, now)
