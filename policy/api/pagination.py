"""Pages of API lists: ``?limit=&offset=``, read strictly.

DRF silently falls back to its defaults when ``limit`` or ``offset`` is not a number; a client
that sent ``limit=1O0`` would page through the wrong window without knowing. Here such a
value is a 400 naming the parameter.
"""

from typing import Any

from django.conf import settings
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination as DrfLimitOffsetPagination
from rest_framework.request import Request

from policy.core.params import parse_count


class LimitOffsetPagination(DrfLimitOffsetPagination):
    """``?limit=&offset=``; ``limit`` is capped at ``API_MAX_PAGE_SIZE``."""

    @property
    def max_limit(self) -> int:  # type: ignore[override]
        return int(settings.API_MAX_PAGE_SIZE)

    def get_limit(self, request: Request) -> int | None:
        limit = _count(request, self.limit_query_param, minimum=1)
        if limit is None:
            return self.default_limit
        return min(limit, self.max_limit)

    def get_offset(self, request: Request) -> int:
        return _count(request, self.offset_query_param, minimum=0) or 0


def _count(request: Request, name: str, *, minimum: int) -> int | None:
    raw: Any = request.query_params.get(name)
    if raw is None:
        return None
    value = parse_count(raw)
    if value is None or value < minimum:
        raise ValidationError({name: [f"Must be a whole number of at least {minimum}."]})
    return value
