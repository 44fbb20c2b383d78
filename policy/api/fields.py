"""Serializers and fields more than one domain's API uses."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from scoring import INT32_MAX


class RevertSerializer(serializers.Serializer[Any]):
    version = serializers.IntegerField(
        min_value=1, max_value=INT32_MAX, help_text="The version to go back to (see history)."
    )


class SnapshotRefSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    taken_at = serializers.DateTimeField()
