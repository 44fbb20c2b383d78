"""Placement decisions (evaluated or observed) and what-if runs."""

from policy.decisions.models.decisions import (
    ExplanationBase,
    PendingExplanation,
    PlacementDecision,
)
from policy.decisions.models.whatif import WhatIfRun

__all__ = ["ExplanationBase", "PendingExplanation", "PlacementDecision", "WhatIfRun"]
