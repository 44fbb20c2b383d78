"""Fixes for an unschedulable pod, each checked by running the engine again with it applied.

:func:`advise` reads why every node rejected the pod (the filters' verdicts of the engine's
decision), proposes the smallest changes to the pod, the policy or a few nodes that lift those
rejections, and keeps only those under which the engine, re-run, places the pod. See
docs/advisor.md for the kinds, their patches and their order.
"""

from scoring.advisor.advise import MAX_FIXES, advise
from scoring.advisor.fix import Fix
from scoring.advisor.merge_patch import apply_merge_patch
from scoring.advisor.sweep import SweepRow, loadaware_sweep, swept_field

__all__ = [
    "MAX_FIXES",
    "Fix",
    "SweepRow",
    "advise",
    "apply_merge_patch",
    "loadaware_sweep",
    "swept_field",
]
