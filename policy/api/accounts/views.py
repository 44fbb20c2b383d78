"""Views of the accounts API: your tokens, who you are, and the audit trail."""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.models import User
from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from policy.accounts import services as token_services
from policy.accounts.filters import AuthorizationFailureFilterSet, PolicyChangeFilterSet
from policy.accounts.models import ApiToken, AuthorizationFailure, PolicyChange
from policy.accounts.roles import CanPushPolicy, IsViewer, roles_of
from policy.api.accounts.serializers import (
    ApiTokenCreatedSerializer,
    ApiTokenSerializer,
    AuthorizationFailureSerializer,
    MeSerializer,
    PolicyChangeSerializer,
)
from policy.core import errors


class ApiTokenViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet[ApiToken],
):
    """Your own API tokens. The key is in the creation response only; DELETE revokes."""

    serializer_class = ApiTokenSerializer
    permission_classes = [IsAuthenticated]
    ordering_fields = ["name", "created", "expires", "last_used"]
    filterset_fields = ["write_enabled"]

    def get_queryset(self) -> QuerySet[ApiToken]:
        return ApiToken.objects.filter(owner_id=self.request.user.pk)

    @extend_schema(responses={201: ApiTokenCreatedSerializer})
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        creator = request.auth if isinstance(request.auth, ApiToken) else None
        try:
            token, key = token_services.create_token(
                cast(User, request.user), creator=creator, **serializer.validated_data
            )
        except errors.ServiceError as exc:
            raise serializers.ValidationError({exc.field: [str(exc)]}) from None
        context = {**self.get_serializer_context(), "key": key}
        created = ApiTokenCreatedSerializer(token, context=context)
        return Response(created.data, status=status.HTTP_201_CREATED)

    def perform_destroy(self, instance: ApiToken) -> None:
        token_services.revoke_token(instance)


class MeView(APIView):
    """Who you are, your roles, and how this request authenticated."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses=MeSerializer)
    def get(self, request: Request) -> Response:
        token = request.auth if isinstance(request.auth, ApiToken) else None
        body = {
            "username": request.user.get_username(),
            "roles": roles_of(request.user),
            "is_superuser": request.user.is_superuser,
            "authentication": "token" if token else "session",
            "token": ApiTokenSerializer(token).data if token else None,
        }
        return Response(MeSerializer(body).data)


class PolicyChangeViewSet(viewsets.ReadOnlyModelViewSet[PolicyChange]):
    """Every recorded policy change, newest first."""

    queryset = PolicyChange.objects.select_related("content_type")
    serializer_class = PolicyChangeSerializer
    filterset_class = PolicyChangeFilterSet
    permission_classes = [IsViewer]
    ordering_fields = ["id", "time"]
    ordering = ["-time", "-id"]


class AuthorizationFailureViewSet(viewsets.ReadOnlyModelViewSet[AuthorizationFailure]):
    """Requests refused for lack of rights (operators only)."""

    queryset = AuthorizationFailure.objects.all()
    serializer_class = AuthorizationFailureSerializer
    filterset_class = AuthorizationFailureFilterSet
    permission_classes = [CanPushPolicy]
    ordering_fields = ["id", "time"]
    ordering = ["-time", "-id"]
