"""schedboard's models, one module per concern (as NetBox does)."""

from policy.models.clusters import Cluster, ClusterSnapshot
from policy.models.decisions import PlacementDecision
from policy.models.tokens import ApiToken

__all__ = [
    "ApiToken",
    "Cluster",
    "ClusterSnapshot",
    "PlacementDecision",
]
