from django.urls import path

from policy import views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("clusters/<int:pk>/nodes/<str:name>/", views.node_detail, name="node-detail"),
    path("evaluate/", views.evaluate, name="evaluate"),
    path("decisions/", views.decision_list, name="decision-list"),
    path("decisions/<int:pk>/", views.decision_detail, name="decision-detail"),
    path("decisions/<int:pk>/nodes/<str:name>/", views.decision_node, name="decision-node"),
]
