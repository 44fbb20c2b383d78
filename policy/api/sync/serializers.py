"""Serializers of the sync API: jobs with their changes, push requests and drift reports."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from policy.api.strict import ModelSerializer, StrictCharField
from policy.sync.models import SyncJob


class ChangeSerializer(serializers.Serializer[Any]):
    kind = StrictCharField()
    namespace = StrictCharField(allow_blank=True)
    name = StrictCharField()
    field = StrictCharField()
    action = serializers.ChoiceField(choices=["add", "update", "remove"])
    before = StrictCharField(allow_null=True)
    after = StrictCharField(allow_null=True)
    diff = StrictCharField(allow_blank=True)
    attention = serializers.ListField(
        child=StrictCharField(),
        required=False,
        default=list,
        help_text="Why this change can break the scheduler (leaderElection, clientConnection, "
        "a removed profile or plugin, a changed schedulerName); confirming a plan with any "
        "needs acknowledge_attention.",
    )
    inFlight = serializers.BooleanField(  # the stored key
        required=False,
        default=False,
        help_text="A running push's write not heard back from yet: it may or may not have "
        "landed (a push that stopped meanwhile keeps it so until its retry finds out).",
    )
    landedUnheard = serializers.BooleanField(  # the stored key
        required=False,
        default=False,
        help_text="Written by an attempt whose worker stopped before hearing back; the "
        "retry found it in place.",
    )


class SyncJobSerializer(ModelSerializer[SyncJob]):
    requested_by: serializers.SlugRelatedField[Any] = serializers.SlugRelatedField(
        slug_field="username",
        read_only=True,
        allow_null=True,  # null: the system asked
    )
    duration = serializers.FloatField(read_only=True, allow_null=True)
    changes = ChangeSerializer(many=True, read_only=True)
    notes = serializers.ListField(child=StrictCharField(), read_only=True)

    class Meta:
        model = SyncJob
        fields = [
            "id",
            "cluster",
            "kind",
            "status",
            "trigger",
            "requested_by",
            "created",
            "started",
            "finished",
            "duration",
            "attempts",
            "error",
            "changes",
            "notes",
            "snapshot",
            "log",
        ]
        read_only_fields = fields


class DriftSerializer(serializers.Serializer[Any]):
    kind = StrictCharField()
    namespace = StrictCharField(allow_blank=True)
    name = StrictCharField()
    field = StrictCharField()
    expected = StrictCharField(allow_null=True, help_text="What schedboard last wrote.")
    actual = StrictCharField(allow_null=True, help_text="What the cluster has.")
    diff = StrictCharField()


class SnapshotAgeSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    taken_at = serializers.DateTimeField()
    age_seconds = serializers.FloatField()


class DriftReportSerializer(serializers.Serializer[Any]):
    cluster = serializers.IntegerField()
    drifted = serializers.BooleanField()
    checked_at = serializers.DateTimeField(allow_null=True)
    last_push = serializers.IntegerField(allow_null=True)
    last_pushed_at = serializers.DateTimeField(allow_null=True)
    snapshot = SnapshotAgeSerializer(allow_null=True)
    drift = DriftSerializer(many=True)


class PushRequestSerializer(serializers.Serializer[Any]):
    plan = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="The succeeded dry-run of this cluster that was reviewed: the cluster is "
        "planned again and pushed only if the changes are still that plan's (else 409 with "
        "the new plan), and the push writes nothing beyond them.",
    )
    acknowledge_attention = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Confirms a plan whose changes need attention (see each change's "
        "attention): without it such a plan is not pushed (400).",
    )


class ConfirmationConflictSerializer(serializers.Serializer[Any]):
    detail = StrictCharField()
    plan = SyncJobSerializer(help_text="What a push would change now, for review.")
