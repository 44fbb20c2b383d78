"""Filters every list shares, in the pages and the API."""

from datetime import UTC, datetime
from typing import Any

import django_filters
from django import forms

from scoring import INT64_MAX

_ID_RANGE = {"min_value": 1, "max_value": INT64_MAX}


class IdFilter(django_filters.NumberFilter):
    """An object id: a positive integer (not a decimal), within the database's range."""

    field_class = forms.IntegerField

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **{**_ID_RANGE, **kwargs})


class UtcDateTimeFilter(django_filters.IsoDateTimeFilter):
    """ISO 8601 date-time, converted to UTC before the query: PostgreSQL refuses UTC offsets
    beyond ±15:59, which Python accepts."""

    def filter(self, qs: Any, value: Any) -> Any:
        if isinstance(value, datetime):
            try:
                value = value.astimezone(UTC)
            except OverflowError:  # year 1 minus an offset: outside every time stamp
                return qs.none()
        return super().filter(qs, value)
