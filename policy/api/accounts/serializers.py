"""Serializers of the accounts API: tokens, the caller, policy changes and refused requests."""

from __future__ import annotations

import difflib
from datetime import datetime
from typing import Any

import yaml
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from policy.accounts.models import ApiToken, AuthorizationFailure, PolicyChange
from policy.api.strict import ModelSerializer, StrictCharField
from policy.policies.documents import build_document


class ApiTokenSerializer(ModelSerializer[ApiToken]):
    class Meta:
        model = ApiToken
        fields = ["id", "name", "key_prefix", "write_enabled", "expires", "created", "last_used"]
        read_only_fields = ["key_prefix", "created", "last_used"]

    def validate_name(self, name: str) -> str:
        owner = self.context["request"].user
        if ApiToken.objects.filter(owner=owner, name=name).exists():
            raise serializers.ValidationError(f"You already have a token named {name!r}.")
        return name

    def validate_expires(self, expires: datetime | None) -> datetime | None:
        if expires is not None and expires <= timezone.now():
            raise serializers.ValidationError("Must be in the future.")
        return expires


class ApiTokenCreatedSerializer(ApiTokenSerializer):
    """The creation response: the only time the key is shown."""

    key = serializers.SerializerMethodField(help_text="Shown once; store it now.")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "key"]

    def get_key(self, token: ApiToken) -> str:
        return str(self.context["key"])


class MeSerializer(serializers.Serializer[Any]):
    username = StrictCharField()
    roles = serializers.ListField(child=StrictCharField())
    is_superuser = serializers.BooleanField()
    authentication = serializers.ChoiceField(choices=["session", "token"])
    token = ApiTokenSerializer(allow_null=True)


class PolicyChangeSerializer(ModelSerializer[PolicyChange]):
    object_type = StrictCharField(source="content_type.model", read_only=True)
    version = serializers.IntegerField(source="object_version", read_only=True)
    diff = serializers.SerializerMethodField(
        help_text="Top-level fields that differ: {field: {before, after}}."
    )
    document_diff = serializers.SerializerMethodField(
        help_text="Scheduler configurations: unified diff of the v1 document (YAML)."
    )
    prechange_data = serializers.JSONField(read_only=True)
    postchange_data = serializers.JSONField(read_only=True)

    class Meta:
        model = PolicyChange
        fields = [
            "id",
            "time",
            "user_name",
            "source",
            "token_name",
            "remote_addr",
            "request_id",
            "action",
            "object_type",
            "object_id",
            "object_repr",
            "version",
            "cluster",
            "message",
            "diff",
            "document_diff",
            "prechange_data",
            "postchange_data",
        ]
        read_only_fields = fields

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_diff(self, change: PolicyChange) -> dict[str, Any]:
        return change.diff()

    def get_document_diff(self, change: PolicyChange) -> str:
        trees = [change.prechange_data, change.postchange_data]
        if not any(isinstance(t, dict) and "profiles" in t for t in trees):
            return ""
        texts = [_document_text(t) for t in trees]
        return "".join(
            difflib.unified_diff(
                texts[0].splitlines(keepends=True),
                texts[1].splitlines(keepends=True),
                fromfile=f"before v{change.object_version - 1}" if texts[0] else "/dev/null",
                tofile=f"after v{change.object_version}" if texts[1] else "/dev/null",
            )
        )


def _document_text(tree: Any) -> str:
    if not isinstance(tree, dict):
        return ""
    return yaml.safe_dump(build_document(tree).document, sort_keys=False)


class AuthorizationFailureSerializer(ModelSerializer[AuthorizationFailure]):
    class Meta:
        model = AuthorizationFailure
        fields = [
            "id",
            "time",
            "user_name",
            "source",
            "token_name",
            "remote_addr",
            "request_id",
            "method",
            "path",
            "status_code",
            "reason",
        ]
        read_only_fields = fields
