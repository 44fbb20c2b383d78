"""Server-rendered pages and the health probes (one module per area)."""

from policy.views.clusters import dashboard, node_detail
from policy.views.decisions import decision_detail, decision_list, decision_node, evaluate
from policy.views.health import healthz, readyz

__all__ = [
    "dashboard",
    "decision_detail",
    "decision_list",
    "decision_node",
    "evaluate",
    "healthz",
    "node_detail",
    "readyz",
]
