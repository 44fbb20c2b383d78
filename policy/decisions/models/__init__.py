"""Placement decisions (evaluated or observed) and what-if runs."""

from policy.decisions.models.decisions import PlacementDecision
from policy.decisions.models.whatif import WhatIfRun

__all__ = ["PlacementDecision", "WhatIfRun"]
