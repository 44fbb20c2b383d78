"""The anomaly detector LowNodeLoad keeps per node.

Upstream: pkg/descheduler/utils/anomaly/basic_detector.go.

A source node is marked abnormal once per round; it becomes anomalous when the consecutive count
*exceeds* ``consecutiveAbnormalities`` (so the 6th round with the default 5). An anomalous node
returns to OK after ``timeout`` or when the consecutive normal marks exceed
``consecutiveNormalities``; returning to OK (or a ``Reset``) clears the counters. Times are
nanoseconds on any monotonic clock the caller chooses.
"""

from __future__ import annotations

from dataclasses import dataclass

from scoring.descheduler.args import AnomalyCondition

OK = "OK"
ANOMALY = "Anomaly"


@dataclass
class Detector:
    condition: AnomalyCondition
    state: str = OK
    abnormal: int = 0
    normal: int = 0
    expiration: int | None = None  # ns; None is Go's zero time

    def _clear(self, now: int) -> None:
        self.abnormal = self.normal = 0
        self.expiration = now + self.condition.timeout if self.state == ANOMALY else None

    def _set(self, state: str, now: int) -> None:
        if self.state != state:
            self.state = state
            self._clear(now)

    def current(self, now: int) -> str:
        """``currentState``: an expired generation starts over."""
        if self.state == OK and self.expiration is not None and self.expiration < now:
            self._clear(now)
        elif self.state == ANOMALY and (
            (self.expiration is not None and self.expiration < now)
            or self.normal > self.condition.consecutive_normalities
        ):
            self._set(OK, now)
        return self.state

    def mark(self, normal: bool, now: int) -> str:
        """``Mark``: count one round and answer the state after it."""
        state = self.current(now)
        if normal:
            self.normal += 1
            self.abnormal = 0
            if state == ANOMALY and self.normal > self.condition.consecutive_normalities:
                self._set(OK, now)
        else:
            self.abnormal += 1
            self.normal = 0
            if state == OK and self.abnormal > self.condition.consecutive_abnormalities:
                self._set(ANOMALY, now)
        return self.current(now)

    def reset(self, now: int) -> None:
        self._set(OK, now)


def bypassed(condition: AnomalyCondition) -> bool:
    """``filterRealAbnormalNodes`` takes every source node when the count is 1."""
    return condition.consecutive_abnormalities == 1


def rounds_to_anomaly(condition: AnomalyCondition) -> int:
    """Consecutive rounds above ``high`` before a node's pods may be evicted."""
    return 1 if bypassed(condition) else condition.consecutive_abnormalities + 1
