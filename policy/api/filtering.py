"""The API's query filters, read strictly.

django-filter reads ``?enabled=1`` as true, ignores ``?enabled=maybe`` and treats
``?push_mode=`` as "any": a client's typo silently widens the list it gets. Over the API a
filter parameter that is given must say something: empty values, and booleans other than
``true``/``false``, are a 400 naming the parameter. (The pages keep their forms' usual
meaning of an empty select: any.)
"""

from __future__ import annotations

from typing import Any

import django_filters
from django.db.models import QuerySet
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request

BOOLEANS = ("true", "false")


class StrictFilterBackend(DjangoFilterBackend):
    def get_filterset_kwargs(
        self, request: Request, queryset: QuerySet[Any], view: Any
    ) -> dict[str, Any]:
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is not None:
            problems = _problems(request, filterset_class.base_filters)
            if problems:
                raise ValidationError(problems)
        kwargs: dict[str, Any] = super().get_filterset_kwargs(request, queryset, view)
        return kwargs


def _problems(request: Request, filters: dict[str, Any]) -> dict[str, list[str]]:
    problems: dict[str, list[str]] = {}
    for name, filter_ in filters.items():
        for value in request.query_params.getlist(name):
            if value == "":
                problems[name] = ["Empty: leave the parameter out to not filter by it."]
            elif (
                isinstance(filter_, django_filters.BooleanFilter) and value.lower() not in BOOLEANS
            ):
                problems[name] = [f"Must be true or false, not {value[:40]!r}."]
    return problems
