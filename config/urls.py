"""Top-level URLs: the dashboard, auth pages, health probes, admin and the REST API."""

from django.contrib import admin
from django.urls import include, path

from policy.web import views
from policy.web.metrics import metrics_view

urlpatterns = [
    path("", include("policy.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/", include("policy.api.urls")),
]

handler404 = "policy.api.errors.page_not_found"
handler500 = "policy.api.errors.server_error"
