from django.urls import path

from policy import views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
]
