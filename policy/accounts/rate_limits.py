"""Rate limits on the expensive writes: each evaluation and what-if comparison runs the
engine on a whole cluster and stores its result, so one person must not be able to fill the
database or hold every worker. Counted per user, whichever way they come: the API with any of
their tokens (minting more tokens buys no more) and the evaluate and what-if pages share one
count. Anonymous requests count per address. ``API_EVALUATE_RATE`` and ``API_WHATIF_RATE``
set the rates (``N/second|minute|hour|day``); over the rate: 429 with ``Retry-After``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle


class _PerUser(SimpleRateThrottle):
    setting = ""
    what = ""  # what is counted, for people

    def get_rate(self) -> str | None:
        """Read at each request (not at import, as DRF does), so settings can change it."""
        rate: str | None = getattr(settings, self.setting)
        return rate

    def get_cache_key(self, request: Request | HttpRequest, view: Any) -> str | None:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            ident = f"user-{user.pk}"  # a token's requests are its owner's
        else:
            ident = f"address-{self.get_ident(request)}"  # type: ignore[arg-type]
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def refused(self, request: HttpRequest) -> float | None:
        """For pages: None when ``request`` may go on, else the seconds to wait (counted)."""
        if self.allow_request(request, None):  # type: ignore[arg-type]
            return None
        return self.wait() or 1.0


class EvaluateThrottle(_PerUser):
    scope = "evaluate"
    what = "evaluations"
    setting = "API_EVALUATE_RATE"


class WhatIfThrottle(_PerUser):
    scope = "what-if"
    what = "what-if comparisons"
    setting = "API_WHATIF_RATE"
