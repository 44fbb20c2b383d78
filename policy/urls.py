from django.urls import path

from policy.web import views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("clusters/<int:pk>/nodes/<str:name>/", views.node_detail, name="node-detail"),
    path("sync/", views.sync_index, name="sync-index"),
    path("clusters/new/", views.cluster_add, name="cluster-add"),
    path(
        "clusters/<int:pk>/loadaware-sweep/",
        views.loadaware_sweep,
        name="cluster-loadaware-sweep",
    ),
    path("clusters/<int:pk>/sync/", views.cluster_sync, name="cluster-sync"),
    path("clusters/<int:pk>/sync/plan/", views.cluster_sync_plan, name="cluster-sync-plan"),
    path(
        "clusters/<int:pk>/sync/plan/<int:job>/",
        views.cluster_sync_review,
        name="cluster-sync-review",
    ),
    path("clusters/<int:pk>/sync/push/", views.cluster_sync_push, name="cluster-sync-push"),
    path(
        "clusters/<int:pk>/sync/refresh/", views.cluster_sync_refresh, name="cluster-sync-refresh"
    ),
    path("clusters/<int:pk>/sync/target/", views.cluster_sync_target, name="cluster-sync-target"),
    path("clusters/<int:pk>/sync/jobs/<int:job>/", views.cluster_sync_job, name="cluster-sync-job"),
    path("evaluate/", views.evaluate, name="evaluate"),
    path(
        "descheduler/<int:pk>/lownodeload/",
        views.lownodeload_edit,
        name="descheduler-lownodeload",
    ),
    path("decisions/", views.decision_list, name="decision-list"),
    path("decisions/compare/", views.decision_compare, name="decision-compare"),
    path("decisions/<int:pk>/", views.decision_detail, name="decision-detail"),
    path("decisions/<int:pk>/nodes/<str:name>/", views.decision_node, name="decision-node"),
    path("what-if/", views.whatif_list, name="whatif-list"),
    path("what-if/<int:pk>/", views.whatif_detail, name="whatif-detail"),
    path("what-if/<int:pk>/cancel/", views.whatif_cancel, name="whatif-cancel"),
    path("tokens/", views.token_list, name="token-list"),
    path("tokens/<int:pk>/revoke/", views.token_revoke, name="token-revoke"),
    path("policies/", views.policy_index, name="policy-index"),
    path("policies/configurations/import/", views.policy_import, name="policy-import"),
    path("policies/<slug:kind>/new/", views.policy_create, name="policy-create"),
    path("policies/<slug:kind>/<int:pk>/", views.policy_detail, name="policy-detail"),
    path("policies/<slug:kind>/<int:pk>/edit/", views.policy_edit, name="policy-edit"),
    path("policies/<slug:kind>/<int:pk>/delete/", views.policy_delete, name="policy-delete"),
    path("policies/<slug:kind>/<int:pk>/history/", views.policy_history, name="policy-history"),
    path("policies/<slug:kind>/<int:pk>/revert/", views.policy_revert, name="policy-revert"),
]
