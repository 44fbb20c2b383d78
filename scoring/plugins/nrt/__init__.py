"""NodeResourceTopologyMatch (kubernetes-sigs/scheduler-plugins pkg/noderesourcetopology)."""

from scoring.plugins.nrt.plugin import NodeResourceTopologyMatch

__all__ = ["NodeResourceTopologyMatch"]
