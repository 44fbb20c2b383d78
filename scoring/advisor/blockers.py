"""Which filters rejected the pod on which nodes, read from the engine's decision."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from scoring.decision import Decision
from scoring.framework import Status
from scoring.snapshot import BoolArray, IntArray


@dataclass(frozen=True)
class Blockers:
    """``failing[plugin]``: the nodes that filter rejected; ``count``: how many filters
    rejected each node."""

    decision: Decision
    failing: dict[str, BoolArray]
    count: IntArray

    @classmethod
    def of(cls, decision: Decision) -> Blockers:
        failing = {o.plugin: ~o.result.passed for o in decision.filters}
        count = np.zeros(len(decision.cycle.snapshot), dtype=np.int64)
        for mask in failing.values():
            count += mask
        return cls(decision, failing, count)

    def only(self, plugins: Iterable[str]) -> BoolArray:
        """Nodes some of ``plugins`` reject and no other filter does."""
        names = [p for p in plugins if p in self.failing]
        if not names:
            return np.zeros(len(self.count), dtype=bool)
        within = np.zeros(len(self.count), dtype=np.int64)
        for name in names:
            within += self.failing[name]
        result: BoolArray = (within > 0) & (within == self.count)
        return result

    def any(self, plugin: str) -> bool:
        mask = self.failing.get(plugin)
        return mask is not None and bool(mask.any())

    def status(self, plugin: str, node: int) -> Status:
        for outcome in self.decision.filters:
            if outcome.plugin == plugin:
                return outcome.result.status(node)
        raise KeyError(plugin)
