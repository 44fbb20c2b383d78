"""The API's rate limits on the pages that do the same work (evaluate, start a what-if): one
count per user across both (:mod:`policy.accounts.rate_limits`); over it, a 429 page."""

from __future__ import annotations

import math

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from policy.accounts.rate_limits import EvaluateThrottle, WhatIfThrottle

__all__ = ["EvaluateThrottle", "WhatIfThrottle", "over_rate"]


def over_rate(
    request: HttpRequest, throttle: EvaluateThrottle | WhatIfThrottle
) -> HttpResponse | None:
    """None when the request may go on (and is counted), else the 429 page to answer."""
    wait = throttle.refused(request)
    if wait is None:
        return None
    seconds = max(1, math.ceil(wait))
    response = render(
        request,
        "429.html",
        {"what": throttle.what, "rate": throttle.get_rate(), "seconds": seconds},
        status=429,
    )
    response["Retry-After"] = str(seconds)
    return response
