from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from policy.accounts.models import ApiToken
from policy.clusters.models import Cluster, ClusterSnapshot


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "kubeconfig_context", "updated"]
    list_filter = ["kind"]
    search_fields = ["name"]


@admin.register(ClusterSnapshot)
class ClusterSnapshotAdmin(admin.ModelAdmin):
    list_display = ["cluster", "taken_at", "node_count", "pod_count", "pending_pod_count"]
    list_filter = ["cluster"]
    exclude = ["stored_objects", "changes"]  # megabytes of JSON: not for a form
    readonly_fields = [
        "cluster",
        "taken_at",
        "node_count",
        "pod_count",
        "pending_pod_count",
        "node_metric_count",
        "topology_count",
    ]

    def get_queryset(self, request: HttpRequest) -> QuerySet[ClusterSnapshot]:
        return ClusterSnapshot.snapshots.summaries().select_related("cluster")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are created through the API (the key is shown once); admins can revoke them."""

    list_display = ["name", "owner", "key_prefix", "write_enabled", "expires", "last_used"]
    list_filter = ["write_enabled"]
    search_fields = ["name", "owner__username", "key_prefix"]
    readonly_fields = ["owner", "key_prefix", "created", "last_used"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
