"""Placement decisions (evaluated or observed) and what-if runs."""

from policy.decisions.models.decisions import ExplanationBase, PlacementDecision
from policy.decisions.models.whatif import WhatIfRun

__all__ = ["ExplanationBase", "PlacementDecision", "WhatIfRun"]
