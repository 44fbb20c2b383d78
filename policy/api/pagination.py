from django.conf import settings
from rest_framework.pagination import LimitOffsetPagination as DrfLimitOffsetPagination


class LimitOffsetPagination(DrfLimitOffsetPagination):
    """``?limit=&offset=``; ``limit`` is capped at ``API_MAX_PAGE_SIZE``."""

    @property
    def max_limit(self) -> int:  # type: ignore[override]
        return int(settings.API_MAX_PAGE_SIZE)
