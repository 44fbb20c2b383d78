"""The OpenAPI description of what every endpoint really answers (drf-spectacular).

:class:`AutoSchema` (``DEFAULT_SCHEMA_CLASS``) adds to each operation the responses the
framework gives without the view saying so: 401/403 (authentication, roles), 404 (detail
routes), 400 in the one validation-error shape, 413 (body size) and 415 (media type) on
writes; on views with
``etag_concurrency`` it documents ``If-Match`` (required on PUT/PATCH/DELETE and the
actions listed in ``if_match_actions``), 412/428 and the ``ETag`` response header.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular import openapi
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from policy.api.strict import StrictCharField


class ErrorDetailSerializer(serializers.Serializer[Any]):
    detail = StrictCharField()


class FieldErrorSerializer(serializers.Serializer[Any]):
    field = StrictCharField(
        allow_blank=True, help_text="The API field path, e.g. plugins.score.enabled[0]."
    )
    type = StrictCharField(help_text="Kubernetes field.ErrorType, e.g. FieldValueInvalid.")
    detail = StrictCharField()


class ValidationErrorSerializer(serializers.Serializer[Any]):
    """A 400: the ``errors`` list, plus DRF-style ``<field>: [messages]`` keys."""

    errors = FieldErrorSerializer(many=True)  # type: ignore[assignment]
    detail = StrictCharField(required=False)
    non_field_errors = serializers.ListField(child=StrictCharField(), required=False)


class TooLargeSerializer(serializers.Serializer[Any]):
    detail = StrictCharField()
    errors = FieldErrorSerializer(many=True, required=False)  # type: ignore[assignment]


WRITE_METHODS = ("PUT", "PATCH", "DELETE")


class AutoSchema(openapi.AutoSchema):
    def _etags(self) -> bool:
        return bool(getattr(self.view, "etag_concurrency", False))

    def _action(self) -> str:
        return str(getattr(self.view, "action", "") or "")

    def _needs_if_match(self) -> bool:
        if not self._etags():
            return False
        if self._action() in getattr(self.view, "if_match_actions", ()):
            return True
        return self.method in WRITE_METHODS and self._action() in (
            "update",
            "partial_update",
            "destroy",
        )

    def _optional_if_match(self) -> bool:
        return self._etags() and self._action() in getattr(self.view, "optional_if_match", ())

    def _etag_codes(self) -> list[str]:
        if not self._etags():
            return []
        action = self._action()
        codes = {
            "retrieve": ["200"],
            "update": ["200"],
            "partial_update": ["200"],
            "create": ["201"],
        }.get(action)
        if codes is None and action in getattr(self.view, "etag_actions", ()):
            codes = ["200", "201"] if self.method == "POST" else ["200"]
        return codes or []

    def get_override_parameters(self) -> list[Any]:
        params = list(super().get_override_parameters())
        if self._needs_if_match() or self._optional_if_match():
            params.append(
                OpenApiParameter(
                    "If-Match",
                    OpenApiTypes.STR,
                    OpenApiParameter.HEADER,
                    required=self._needs_if_match(),
                    description='The ETag you read (W/"<version>"), or * to overwrite whatever '
                    "is there. A stale one gets 412; none gets 428.",
                )
            )
        codes = self._etag_codes()
        if codes:
            params.append(
                OpenApiParameter(
                    "ETag",
                    OpenApiTypes.STR,
                    OpenApiParameter.HEADER,
                    response=codes,
                    description='The object\'s version, W/"<version>": send it as If-Match.',
                )
            )
        return params

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        extra: dict[str, Any] = {}
        if self.get_auth():
            extra["401"] = ErrorDetailSerializer
            extra["403"] = ErrorDetailSerializer
        if "{" in self.path:
            extra["404"] = ErrorDetailSerializer
        if self.method in ("POST", "PUT", "PATCH"):
            extra["400"] = ValidationErrorSerializer
            extra["413"] = TooLargeSerializer
            extra["415"] = ErrorDetailSerializer  # a Content-Type the endpoint does not parse
        elif self.method == "GET" and self._action() in ("list", *self._validated_reads()):
            extra["400"] = ValidationErrorSerializer  # filters
        if self._needs_if_match() or self._optional_if_match():
            extra["412"] = ErrorDetailSerializer
            extra["428"] = ErrorDetailSerializer
        for code, serializer in extra.items():
            if code not in responses:  # errors are JSON, whatever the endpoint's renderers
                responses[code] = self._get_response_for_code(
                    serializer, code, media_types=["application/json"], direction=direction
                )
        return responses

    def _validated_reads(self) -> tuple[str, ...]:
        return tuple(getattr(self.view, "validated_reads", ()))
