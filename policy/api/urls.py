from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from policy.api import decisions, views

app_name = "api"

router = DefaultRouter()
router.register("clusters", views.ClusterViewSet)
router.register("tokens", views.ApiTokenViewSet, basename="apitoken")
router.register("decisions", decisions.DecisionViewSet)

urlpatterns = [
    path("v1/me/", views.MeView.as_view(), name="me"),
    path(
        "v1/clusters/<int:pk>/evaluate/",
        decisions.EvaluateView.as_view(),
        name="cluster-evaluate",
    ),
    path("v1/", include(router.urls)),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api:schema"), name="docs"),
]
