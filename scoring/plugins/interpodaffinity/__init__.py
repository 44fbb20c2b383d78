"""InterPodAffinity (kube-scheduler pkg/scheduler/framework/plugins/interpodaffinity)."""

from scoring.plugins.interpodaffinity.plugin import InterPodAffinity

__all__ = ["InterPodAffinity"]
