"""The snapshot's other pending pods: which the engine cannot place now, and which a change
lets it place (a policy or node fix's ``unblocks``)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import numpy as np

from scoring.engine import Engine, Framework
from scoring.errors import InputError
from scoring.objects import Pod
from scoring.simulation.equivalence import equivalence_key
from scoring.snapshot import IntArray, Snapshot

PROBED_NODES = 64


class PendingPods:
    """Pending pods grouped by equivalence class (pods every plugin treats alike are asked
    once); whether the engine can place a class now is asked only of the classes a change
    places, and remembered."""

    def __init__(self, engine: Engine, snapshot: Snapshot, pod: Pod, now: datetime) -> None:
        self.engine = engine
        self.snapshot = snapshot
        self.now = now
        classes: dict[object, list[Pod]] = {}
        for other in snapshot.pending:
            if other is not pod and other.key != pod.key:
                classes.setdefault(equivalence_key(other), []).append(other)
        self.classes = [(members[0], len(members)) for members in classes.values()]
        self._placeable_now: dict[int, bool] = {}
        self._probe: IntArray | None = None

    def unblocked(
        self,
        frameworks: Mapping[str, Framework],
        snapshot: Snapshot,
        nodes: IntArray | None = None,
    ) -> int:
        """How many pods the engine cannot place now and ``frameworks`` (by schedulerName)
        place on ``snapshot``; with ``nodes``, only those nodes changed, so only they are
        asked."""
        count = 0
        for k, (pod, size) in enumerate(self.classes):
            framework = frameworks.get(pod.scheduler_name)
            if framework is None:
                continue
            if nodes is None:  # a change anywhere: only a pod blocked now can be unblocked
                if not self._now(k) and len(framework.feasible(pod, snapshot, self.now)):
                    count += size
                continue
            if not len(framework.feasible(pod, snapshot, self.now, nodes)):
                continue
            if self._fits_now(pod, nodes):
                continue  # it could take those nodes before the change: not blocked now
            if not self._now(k):
                count += size
        return count

    def _fits_now(self, pod: Pod, nodes: IntArray) -> bool:
        try:
            framework = self.engine.framework_for(pod)
        except InputError:
            return False
        return bool(len(framework.feasible(pod, self.snapshot, self.now, nodes)))

    def _now(self, k: int) -> bool:
        if k not in self._placeable_now:
            pod = self.classes[k][0]
            try:
                framework = self.engine.framework_for(pod)
            except InputError:
                self._placeable_now[k] = False
            else:
                self._placeable_now[k] = self._placeable(framework, pod)
        return self._placeable_now[k]

    def placeable_by(self, framework: Framework, pod: Pod) -> bool:
        """Whether ``framework`` places ``pod`` on this snapshot (probed nodes first)."""
        return self._placeable(framework, pod)

    def _placeable(self, framework: Framework, pod: Pod) -> bool:
        """Asked first of the nodes with the most free cpu (a pod that fits anywhere usually
        fits one of them), then of every node: the same answer, mostly much sooner."""
        if self._probe is None:
            cpu = self.snapshot.resource_index["cpu"]
            free = self.snapshot.allocatable[:, cpu] - self.snapshot.requested[:, cpu]
            self._probe = np.sort(np.argsort(-free, kind="stable")[:PROBED_NODES]).astype(np.int64)
        if len(framework.feasible(pod, self.snapshot, self.now, self._probe)):
            return True
        return bool(len(framework.feasible(pod, self.snapshot, self.now)))
