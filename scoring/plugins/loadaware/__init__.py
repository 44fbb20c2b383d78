"""Koordinator's LoadAwareScheduling: filter and score nodes by measured usage plus estimates.

Upstream: koordinator-sh/koordinator pkg/scheduler/plugins/loadaware (v1.8 semantics). Modules:
``args`` (v1 args: decoding, defaults, validation), ``nodemetric`` (NodeMetric columns),
``thresholds`` (args vs node annotation), ``estimator``, ``priority`` (koord priority classes),
``assign_cache`` (which existing pods are estimated), ``usage`` (base usage kinds), ``filter``,
``score``, ``explain`` and ``plugin`` (the engine plugin).
"""

from scoring.plugins.loadaware.plugin import LoadAwareScheduling

__all__ = ["LoadAwareScheduling"]
