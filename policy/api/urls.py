from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.routers import DefaultRouter

from policy.api.accounts import views as accounts
from policy.api.clusters import views as clusters
from policy.api.decisions import views as decisions
from policy.api.policies import views as policies
from policy.api.sync import views as sync

app_name = "api"

router = DefaultRouter()
router.register("clusters", clusters.ClusterViewSet)
router.register("tokens", accounts.ApiTokenViewSet, basename="apitoken")
router.register("decisions", decisions.DecisionViewSet)
router.register("scheduler-configurations", policies.SchedulerConfigurationViewSet)
router.register("descheduler-configurations", policies.DeschedulerConfigurationViewSet)
router.register("profiles", policies.SchedulerProfileViewSet)
router.register("loadaware-args", policies.LoadAwareArgsViewSet)
router.register("node-threshold-policies", policies.NodeThresholdPolicyViewSet)
router.register("collect-policies", policies.CollectPolicyViewSet)
router.register("policy-changes", accounts.PolicyChangeViewSet)
router.register("authorization-failures", accounts.AuthorizationFailureViewSet)
router.register("sync-jobs", sync.SyncJobViewSet)
router.register("what-if", decisions.WhatIfViewSet)

urlpatterns = [
    path("v1/me/", accounts.MeView.as_view(), name="me"),
    path(
        "v1/clusters/<int:pk>/evaluate/",
        decisions.EvaluateView.as_view(),
        name="cluster-evaluate",
    ),
    path("v1/clusters/<int:pk>/sync/", sync.ClusterSyncView.as_view(), name="cluster-sync"),
    path(
        "v1/clusters/<int:pk>/sync/plan/",
        sync.ClusterSyncPlanView.as_view(),
        name="cluster-sync-plan",
    ),
    path(
        "v1/clusters/<int:pk>/refresh/",
        sync.ClusterRefreshView.as_view(),
        name="cluster-refresh",
    ),
    path(
        "v1/clusters/<int:pk>/lownodeload/",
        decisions.LowNodeLoadView.as_view(),
        name="cluster-lownodeload",
    ),
    path(
        "v1/clusters/<int:pk>/coherence/",
        decisions.CoherenceView.as_view(),
        name="cluster-coherence",
    ),
    path("v1/clusters/<int:pk>/drift/", sync.ClusterDriftView.as_view(), name="cluster-drift"),
    path("v1/", include(router.urls)),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api:schema"), name="docs"),
]
