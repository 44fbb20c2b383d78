"""LimitAware (Koordinator; scheduler-plugins KEP-217 resource limit-aware scoring)."""

from scoring.plugins.limitaware.plugin import LimitAware

__all__ = ["LimitAware"]
