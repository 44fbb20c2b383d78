"""Serializer fields that take text only.

DRF's ``CharField`` turns a number into its digits (``{"name": 65717}`` becomes ``"65717"``); a
client that sent the wrong type should hear so, with the field named, as for every other rule.
``ModelSerializer`` here maps the models' text fields to :class:`StrictCharField`.
"""

from __future__ import annotations

from typing import Any, TypeVar

from django.db import models
from rest_framework import serializers

M = TypeVar("M", bound=models.Model)


class StrictCharField(serializers.CharField):
    default_error_messages = {"invalid": "Not a valid string: a JSON string is expected."}

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        value: str = super().to_internal_value(data)
        return value


class ModelSerializer(serializers.ModelSerializer[M]):
    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.CharField: StrictCharField,
        models.TextField: StrictCharField,
    }
