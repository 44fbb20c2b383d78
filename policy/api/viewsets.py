"""Viewset machinery more than one domain's API uses: service-backed writes, history, ``?at=``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, ClassVar, TypeVar

from django.core.exceptions import ObjectDoesNotExist
from django.utils.dateparse import parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import exceptions, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from policy.accounts import changes
from policy.accounts.changes import ChangeContext
from policy.api import concurrency
from policy.api.accounts.serializers import PolicyChangeSerializer
from policy.api.errors import PolicyValidationError
from policy.api.fields import RevertSerializer
from policy.core.models import VersionedModel
from policy.core.params import in_range
from policy.policies import services as policies
from policy.policies.located import located_body

T = TypeVar("T", bound=VersionedModel)


def parse_at(request: Request) -> datetime | None:
    """``?at=`` (ISO 8601 with a UTC offset), or None for now."""
    raw = request.query_params.get("at")
    if raw is None:
        return None
    try:
        value = parse_datetime(raw)
    except ValueError:
        value = None
    if value is None or value.tzinfo is None or not in_range(value):
        raise exceptions.ValidationError(
            {"at": ["Must be an ISO 8601 date-time with a UTC offset, e.g. 2026-11-01T23:00Z."]}
        )
    return value


AT_PARAMETER = OpenApiParameter(
    "at",
    OpenApiTypes.DATETIME,
    OpenApiParameter.QUERY,
    description="Evaluate time windows at this time (default: now).",
)


class ServiceMixin(viewsets.GenericViewSet[T]):
    """Reads with an ``ETag``; writes through ``service``.

    Each viewset names its queryset, serializer, filterset and service; reads answer with an
    ``ETag``, and writes are service calls that honour ``If-Match``
    (:mod:`policy.api.concurrency`), record the change and answer validation errors in the
    API's 400 shape (:mod:`policy.api.errors`).
    """

    etag_concurrency = True
    if_match_actions: ClassVar[tuple[str, ...]] = ("revert",)
    etag_actions: ClassVar[tuple[str, ...]] = ("revert",)
    service: ClassVar[policies.PolicyService[Any]]
    validated_reads: ClassVar[tuple[str, ...]] = ()

    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self._respond(self.get_object())

    def _context(self) -> ChangeContext:
        return ChangeContext.from_request(self.request)

    def _respond(self, obj: Any, code: int = status.HTTP_200_OK) -> Response:
        assert isinstance(obj, VersionedModel)
        data = self.get_serializer(obj).data
        return Response(data, status=code, headers={"ETag": obj.etag})

    def _call(self, object_id: int | None, data: Any, call: Callable[[], Any]) -> Any:
        """Run a service call, turning its errors into API errors."""
        try:
            return call()
        except policies.PolicyInvalid as exc:
            changed = set(data) if hasattr(data, "keys") else set()
            raise PolicyValidationError(
                located_body(
                    exc.errors,
                    kind=self.service.kind,
                    object_id=exc.subject_id or object_id,
                    changed=changed,
                )
            ) from None
        except policies.PreconditionFailed as exc:
            raise concurrency.stale(exc.current_version) from None
        except policies.VersionNotFound as exc:
            raise exceptions.ValidationError({"version": [str(exc)]}) from None
        except ObjectDoesNotExist:  # deleted by a concurrent request
            raise exceptions.NotFound() from None


class CreateMixin(ServiceMixin[T]):
    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        obj = self._call(None, data, lambda: self.service.create(data, self._context()))
        return self._respond(obj, status.HTTP_201_CREATED)


class UpdateMixin(ServiceMixin[T]):
    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        partial = kwargs.pop("partial", False)
        instance = self.get_object()
        expected = concurrency.expected_version(request, instance.version)
        serializer = self.get_serializer(instance, data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        obj = self._call(
            instance.pk,
            data,
            lambda: self.service.update(
                instance.pk, data, self._context(), expected_version=expected
            ),
        )
        return self._respond(obj)

    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return self.update(request, *args, partial=True, **kwargs)


class DestroyMixin(ServiceMixin[T]):
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        instance = self.get_object()
        expected = concurrency.expected_version(request, instance.version)
        self._call(
            instance.pk,
            {},
            lambda: self.service.delete(instance.pk, self._context(), expected_version=expected),
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_view(
    history=extend_schema(
        responses=PolicyChangeSerializer(many=True),
        description="The object's versions, newest first: who, when, from where, and the diff.",
    ),
    revert=extend_schema(
        request=RevertSerializer,
        description="Restore the object as it was at `version` (recorded as a new change; "
        "needs If-Match).",
    ),
)
class HistoryMixin(ServiceMixin[T]):
    """``GET …/{id}/history`` lists an object's versions with diffs; ``POST …/{id}/revert``
    restores one."""

    @action(detail=True, methods=["get"], filter_backends=[])
    def history(self, request: Request, pk: str | None = None) -> Response:
        obj = self.get_object()
        changes_ = changes.history(obj).select_related("content_type")
        page = self.paginate_queryset(changes_)
        data = PolicyChangeSerializer(page if page is not None else changes_, many=True).data
        return self.get_paginated_response(data) if page is not None else Response(data)

    @action(detail=True, methods=["post"])
    def revert(self, request: Request, pk: str | None = None) -> Response:
        instance = self.get_object()
        expected = concurrency.expected_version(request, instance.version)
        serializer = RevertSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        version = serializer.validated_data["version"]
        obj = self._call(
            instance.pk,
            {},
            lambda: self.service.revert(
                instance.pk, version, self._context(), expected_version=expected
            ),
        )
        return self._respond(obj)
