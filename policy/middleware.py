"""Middleware: authentication for every page (Django's LoginRequiredMiddleware), API pages
included; request ids; request size limits."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequired
from django.http import HttpRequest, HttpResponse, HttpResponseBase, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from rest_framework.renderers import TemplateHTMLRenderer
from rest_framework.views import APIView

from policy.core.broker import BrokerUnavailable
from policy.core.errors import ServiceUnavailable
from policy.web.pages import CLUSTER_COOKIE, SESSION_CLUSTER


class LoginRequiredMiddleware(DjangoLoginRequired):
    """Redirects anonymous visitors of any page to the login form.

    DRF marks its views ``login_not_required``: API clients send tokens, which only DRF reads,
    and get 401/403 from DRF instead of a redirect. DRF views that render an HTML page for
    people (the Swagger UI) are put back under the rule here. Other exemptions (login,
    /healthz, /readyz) carry ``@login_not_required``.
    """

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., Any],
        view_args: tuple[Any, ...],
        view_kwargs: dict[str, Any],
    ) -> HttpResponseBase | None:
        if _is_api_html_page(view_func):
            if not request.user.is_authenticated:
                return self.handle_no_permission(request, view_func)
            return None
        if not getattr(view_func, "login_required", True):
            # Exempt views (the health probes above all) must not load the session: Django's
            # check reads request.user first, and with a session cookie that is a database
            # query, so a probe would fail with the database instead of reporting on it.
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)


def _is_api_html_page(view_func: Callable[..., Any]) -> bool:
    view_class = getattr(view_func, "cls", None)
    return (
        isinstance(view_class, type)
        and issubclass(view_class, APIView)
        and TemplateHTMLRenderer in view_class.renderer_classes
    )


class RequestIdMiddleware:
    """Gives every request an id (``request.request_id``, a UUID), echoed as ``X-Request-ID``.

    A valid UUID sent by the client (or a proxy) in ``X-Request-ID`` is kept, so one id can
    follow a request across services; change-log rows and audit records carry it.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        given = request.headers.get("X-Request-ID", "")
        try:
            request_id = uuid.UUID(given) if given else uuid.uuid4()
        except ValueError:
            request_id = uuid.uuid4()
        request.request_id = request_id  # type: ignore[attr-defined]
        response = self.get_response(request)
        response["X-Request-ID"] = str(request_id)
        return response


class RequestSizeLimitMiddleware:
    """Answers 413 to any request whose declared body exceeds ``DATA_UPLOAD_MAX_MEMORY_SIZE``,
    before anything reads the body: JSON for the API, a page elsewhere (Django's own limit
    leaves out uploaded files, so a page's multipart upload would otherwise be read whole)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if limit is None or length <= limit:
            return self.get_response(request)
        detail = f"Request body too large: {length} bytes, the limit is {limit}."
        if not request.path.startswith("/api/"):  # no session or user yet: a plain page
            return HttpResponse(render_to_string("413.html", {"message": detail}), status=413)
        return JsonResponse(
            {
                "detail": detail,
                "errors": [
                    {
                        "field": "",
                        "type": "FieldValueTooLong",
                        "detail": f"The request body may not exceed {limit} bytes.",
                    }
                ],
            },
            status=413,
        )


class BrokerUnavailableMiddleware:
    """Pages that queue work answer 503 with the broker's state when it is down (the API's
    exception handler does the same in JSON); the queued row is kept for the beat. The same
    for a service that did not answer (an engine worker)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponseBase | None:
        if not isinstance(exc, (BrokerUnavailable, ServiceUnavailable)):
            return None
        response = render(request, "503.html", {"message": str(exc)}, status=503)
        response["Retry-After"] = "30"
        return response


class ProbeMiddleware:
    """Answers ``/healthz``, ``/readyz`` and ``/metrics`` before anything else runs (first in
    MIDDLEWARE).

    Kubelets, container healthchecks and Prometheus call them by IP address, a Host that
    ``ALLOWED_HOSTS`` rightly does not list in production; the host check, sessions, CSRF,
    the SSL redirect and the CSP do not concern a probe. Other methods go on as usual (405).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if request.method in ("GET", "HEAD"):
            from policy.web.metrics import metrics_view
            from policy.web.views.health import healthz, readyz

            probe = {"/healthz": healthz, "/readyz": readyz, "/metrics": metrics_view}.get(
                request.path_info
            )
            if probe is not None:
                return probe(request)
        return self.get_response(request)


class RememberClusterMiddleware:
    """Keeps the cluster chosen in this session in a cookie too: logging out empties the
    session, and logging in again should land on the cluster one was looking at."""

    MAX_AGE = 365 * 24 * 3600

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        session = getattr(request, "session", None)
        if session is None or not session.accessed:
            return response
        chosen = session.get(SESSION_CLUSTER)
        if chosen and str(chosen) != request.COOKIES.get(CLUSTER_COOKIE):
            response.set_cookie(
                CLUSTER_COOKIE,
                str(chosen),
                max_age=self.MAX_AGE,
                httponly=True,
                samesite="Lax",
                secure=settings.SESSION_COOKIE_SECURE,
            )
        return response
