"""Server-rendered pages and the health probes (one module per area)."""

from policy.web.views.cluster_add import cluster_add
from policy.web.views.clusters import dashboard, node_detail
from policy.web.views.decisions import (
    decision_compare,
    decision_detail,
    decision_list,
    decision_node,
    evaluate,
)
from policy.web.views.descheduling import lownodeload_edit
from policy.web.views.health import healthz, readyz
from policy.web.views.policies import (
    policy_create,
    policy_delete,
    policy_detail,
    policy_edit,
    policy_history,
    policy_index,
    policy_revert,
)
from policy.web.views.scheduler_import import policy_import
from policy.web.views.sweep import loadaware_sweep
from policy.web.views.sync import (
    cluster_sync,
    cluster_sync_job,
    cluster_sync_plan,
    cluster_sync_push,
    cluster_sync_refresh,
    cluster_sync_review,
    cluster_sync_target,
    sync_index,
)
from policy.web.views.tokens import token_list, token_revoke
from policy.web.views.whatif import whatif_cancel, whatif_detail, whatif_list

__all__ = [
    "cluster_add",
    "cluster_sync",
    "cluster_sync_job",
    "cluster_sync_plan",
    "cluster_sync_push",
    "cluster_sync_refresh",
    "cluster_sync_review",
    "cluster_sync_target",
    "dashboard",
    "decision_compare",
    "decision_detail",
    "decision_list",
    "decision_node",
    "evaluate",
    "healthz",
    "loadaware_sweep",
    "lownodeload_edit",
    "node_detail",
    "policy_create",
    "policy_delete",
    "policy_detail",
    "policy_edit",
    "policy_history",
    "policy_import",
    "policy_index",
    "policy_revert",
    "readyz",
    "sync_index",
    "token_list",
    "token_revoke",
    "whatif_cancel",
    "whatif_detail",
    "whatif_list",
]
