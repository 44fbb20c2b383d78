"""PodTopologySpread (kube-scheduler pkg/scheduler/framework/plugins/podtopologyspread)."""

from scoring.plugins.podtopologyspread.plugin import PodTopologySpread

__all__ = ["PodTopologySpread"]
