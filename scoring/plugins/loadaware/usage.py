"""The usage a node is judged by, before the incoming pod: ``GetNodeMetricAndEstimatedOfExisting``.

Upstream: pod_assign_cache.go. Three kinds:

- ``node``: ``nodeUsage + nodeDelta`` (measured usage plus what recent pods will still add);
- ``prod``: ``prodUsage + prodDelta`` (only pods both the scheduler and koordlet see as prod,
  plus systemUsage with ``prodUsageIncludeSys``; node usage is not used);
- ``aggregated(type, d)``: the ``type`` percentile over window ``d`` plus ``nodeDelta``. With
  ``d == 0`` the longest reported window is used, and ``nodeUsage`` when there is none; a
  specific ``d`` that is not reported makes the base **``nodeEstimated``**, the full estimates of
  all cached pods, ignoring measured usage entirely.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scoring.durations import format_duration
from scoring.plugins.loadaware.assign_cache import AssignCache
from scoring.plugins.loadaware.nodemetric import NodeMetrics
from scoring.snapshot import BoolArray, IntArray

NODE = "node"
PROD = "prod"
AGGREGATED = "aggregated"


@dataclass(frozen=True)
class UsageKind:
    name: str  # NODE, PROD or AGGREGATED
    aggregation: str = ""
    duration: int = 0  # ns

    @property
    def label(self) -> str:
        if self.name != AGGREGATED:
            return self.name
        window = format_duration(self.duration) if self.duration else "longest window"
        return f"{self.aggregation} over {window}"


NODE_USAGE = UsageKind(NODE)
PROD_USAGE = UsageKind(PROD)


@dataclass(frozen=True)
class BaseUsage:
    """Measured part and estimated part (existing pods), resources × nodes, and per node whether
    the requested aggregation window exists (else a fallback was used)."""

    measured: IntArray
    estimated: IntArray
    window_found: BoolArray

    @property
    def total(self) -> IntArray:
        result: IntArray = self.measured + self.estimated
        return result


def base_usage(
    kind: UsageKind, metrics: NodeMetrics, cache: AssignCache, rows: IntArray | None = None
) -> BaseUsage:
    """The base usage of nodes ``rows`` (an index array; all nodes when None), split into
    measured and estimated parts."""
    pick = slice(None) if rows is None else rows
    found = np.ones(len(metrics.present) if rows is None else len(rows), dtype=bool)
    if kind.name == PROD:
        return BaseUsage(cache.prod_usage[:, pick], cache.prod_delta[:, pick], found)
    measured = metrics.node_usage[:, pick]
    delta = cache.node_delta[:, pick]
    if kind.name == NODE:
        return BaseUsage(measured, delta, found)
    window, found = metrics.aggregated(kind.aggregation, kind.duration)
    window, found = window[:, pick], found[pick]
    if kind.duration == 0:
        return BaseUsage(np.where(found, window, measured), delta, found)
    estimated = np.where(found, delta, cache.node_estimated[:, pick])
    return BaseUsage(np.where(found, window, 0), estimated, found)


def source_label(kind: UsageKind, found: bool, *, include_sys: bool = False) -> str:
    """Where a node's measured usage came from, in words."""
    if kind.name == PROD:
        return "prod pods' reported usage" + (" + system usage" if include_sys else "")
    if kind.name == NODE:
        return "nodeUsage"
    if found:
        return kind.label
    if kind.duration == 0:
        return f"nodeUsage (no {kind.aggregation} window reported)"
    return f"estimates of existing pods (no {kind.label} reported)"
