"""The project's URLs plus a stand-in policy endpoint guarded by CanEditPolicy, until real
policy endpoints exist, so each role's write rights are tested through the full stack."""

from django.urls import path
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.urls import urlpatterns as project_urlpatterns
from policy.accounts.roles import CanEditPolicy


class StandInPolicyView(APIView):
    permission_classes = [CanEditPolicy]

    def get(self, request: Request) -> Response:
        return Response({"policies": []})

    def post(self, request: Request) -> Response:
        return Response({"saved": True}, status=201)


urlpatterns = [
    path("api/v1/test-policies/", StandInPolicyView.as_view()),
    *project_urlpatterns,
]
