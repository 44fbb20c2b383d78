"""Rate limits on the API's expensive writes: each evaluation and what-if comparison runs the
engine on a whole cluster and stores its result, so one client must not be able to fill the
database or hold every worker. Counted per API token when the request carries one, else per
user; ``API_EVALUATE_RATE`` and ``API_WHATIF_RATE`` set the rates (``N/second|minute|hour|day``).
Over the rate: 429 with ``Retry-After``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from policy.accounts.models import ApiToken


class _PerCaller(SimpleRateThrottle):
    setting = ""

    def get_rate(self) -> str | None:
        """Read at each request (not at import, as DRF does), so settings can change it."""
        rate: str | None = getattr(settings, self.setting)
        return rate

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if isinstance(request.auth, ApiToken):
            ident = f"token-{request.auth.pk}"
        elif request.user and request.user.is_authenticated:
            ident = f"user-{request.user.pk}"
        else:
            ident = f"address-{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}


class EvaluateThrottle(_PerCaller):
    scope = "evaluate"
    setting = "API_EVALUATE_RATE"


class WhatIfThrottle(_PerCaller):
    scope = "what-if"
    setting = "API_WHATIF_RATE"
