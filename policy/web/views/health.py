"""Health probes: no login, no cache."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from policy.core import health


@login_not_required
@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness: the process answers. Checks nothing else, so a database outage does not
    get every pod restarted."""
    return JsonResponse({"status": "ok"})


@login_not_required
@never_cache
@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    """Readiness: the database answers and, when one is configured, the broker too."""
    ready, checks = health.readiness()
    return JsonResponse(
        {"status": "ok" if ready else "unavailable", "checks": checks},
        status=200 if ready else 503,
    )
