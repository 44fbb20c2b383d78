"""Error responses: one shape for every 400, and the audit of refused requests.

A 400 body is ``{"errors": [{"field", "type", "detail"}], <field>: [messages], ...}``: the list
uses Kubernetes' ``field.ErrorType`` names (``FieldValueInvalid``, ``FieldValueRequired``...),
the keys are DRF's usual per-field messages, so both generic DRF clients and clients that
want the engine's error types are served. Engine errors are mapped onto the API fields by
:mod:`policy.policies.documents`; errors about another object than the one edited (e.g. the profile
whose schedulerName a change duplicates) are listed under ``non_field_errors`` with their path.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from collections.abc import Iterable
from typing import Any

from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from policy.accounts.changes import ChangeContext, record_denied
from policy.accounts.models import ApiToken
from policy.api.authentication import ReadOnlyToken
from policy.core import database
from policy.core.broker import BrokerUnavailable
from policy.core.choices import ChangeSource
from policy.core.errors import ServiceUnavailable
from policy.policies.located import NON_FIELD
from scoring import DUPLICATE, INVALID, NOT_SUPPORTED, REQUIRED, TOO_LONG, TOO_MANY, TYPE_INVALID

logger = logging.getLogger("policy.audit")


# DRF error codes -> Kubernetes field.ErrorType
_CODE_TYPES = {
    "required": REQUIRED,
    "null": REQUIRED,
    "blank": REQUIRED,
    "invalid_choice": NOT_SUPPORTED,
    "max_length": TOO_LONG,
    "max_string_length": TOO_LONG,
    "max_digits": TOO_LONG,
    "max_decimal_places": TOO_LONG,
    "max_whole_digits": TOO_LONG,
    "unique": DUPLICATE,
    "not_a_list": TYPE_INVALID,
    "not_a_dict": TYPE_INVALID,
    "parse_error": TYPE_INVALID,
    "empty": REQUIRED,
}


class PolicyValidationError(exceptions.APIException):
    """A 400 whose body is already in the final shape."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid"

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__("Invalid input.")
        self.body = body


def error_type(code: str | None) -> str:
    if code and code.startswith("max_") and code.endswith("items"):
        return TOO_MANY
    return _CODE_TYPES.get(code or "", INVALID)


def _flatten(detail: Any, path: str) -> Iterable[tuple[str, str, str]]:
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = str(key)
            if name in (NON_FIELD, "detail"):
                yield from _flatten(value, path)
            elif isinstance(key, int):  # ListField / DictField errors are keyed by index
                yield from _flatten(value, f"{path}[{key}]")
            else:
                yield from _flatten(value, f"{path}.{name}" if path else name)
    elif isinstance(detail, list):
        if detail and all(isinstance(item, str) for item in detail):
            for item in detail:
                yield path, str(item), str(getattr(item, "code", "") or "")
        else:
            for i, item in enumerate(detail):
                if item in ({}, [], None):
                    continue
                yield from _flatten(item, f"{path}[{i}]" if path else f"[{i}]")
    elif detail is not None:
        yield path, str(detail), str(getattr(detail, "code", "") or "")


def drf_errors(detail: Any) -> list[dict[str, str]]:
    """``errors`` entries for a DRF ``ValidationError.detail``."""
    return [
        {"field": field, "type": error_type(code), "detail": message}
        for field, message, code in _flatten(detail, "")
    ]


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, PolicyValidationError):
        return Response(exc.body, status=exc.status_code)
    if isinstance(exc, BrokerUnavailable):
        detail = str(exc)
        return Response(
            {
                "detail": detail,
                "broker": exc.broker,
                "queued": exc.queued,
                "errors": [{"field": "", "type": "BrokerUnavailable", "detail": detail}],
            },
            status=503,
            headers={"Retry-After": "30"},
        )
    if isinstance(exc, ServiceUnavailable):
        detail = str(exc)
        return Response(
            {
                "detail": detail,
                "errors": [{"field": "", "type": type(exc).__name__, "detail": detail}],
            },
            status=503,
            headers={"Retry-After": "10"},
        )
    if isinstance(exc, SuspiciousOperation):  # e.g. too many form fields, a body too large
        too_large = isinstance(exc, RequestDataTooBig)
        detail = str(exc) or "Bad request."
        return Response(
            {"detail": detail, "errors": [{"field": "", "type": TOO_MANY, "detail": detail}]},
            status=413 if too_large else 400,
        )
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    request = context.get("request")
    if isinstance(exc, exceptions.ValidationError):
        detail = response.data
        body = dict(detail) if isinstance(detail, dict) else {NON_FIELD: detail}
        response.data = {"errors": drf_errors(exc.detail), **body}
    elif isinstance(exc, exceptions.ParseError):
        response.data = {
            "detail": str(exc.detail),
            "errors": [{"field": "", "type": TYPE_INVALID, "detail": str(exc.detail)}],
        }
    elif isinstance(exc, exceptions.PermissionDenied) and request is not None:
        token = exc.token if isinstance(exc, ReadOnlyToken) else None
        _audit(request, response.status_code, str(exc.detail), token)
    elif (
        isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed)
        and request is not None
    ):
        logger.info(
            "authentication failure: %s %s from %s: %s",
            request.method,
            request.path,
            request.META.get("REMOTE_ADDR", "-"),
            exc.detail,
        )
    return response


def _audit(request: Any, status_code: int, reason: str, token: ApiToken | None = None) -> None:
    """Record a refused request; ``token``: the one refused at authentication (the request
    has no user then), whose owner and name the record carries."""
    try:
        ctx = ChangeContext.from_request(request)
        if token is not None:
            ctx = dataclasses.replace(
                ctx, user=token.owner, source=ChangeSource.TOKEN, token_name=token.name
            )
    except Exception:
        logger.exception("could not build the audit context of a refused request")
        return
    record_denied(
        ctx, method=request.method, path=request.get_full_path(), status=status_code, reason=reason
    )


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """``handler404``: JSON for a path under /api/ that no route matches, the page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``. The database out of reach: a 503 naming it, JSON under /api/, a page
    needing no database elsewhere (nothing to log in with, no session). Anything else: the
    usual 500, JSON under /api/."""
    exc = sys.exc_info()[1]
    api = request.path.startswith("/api/")
    if database.unreachable(exc):
        assert exc is not None
        detail = database.unreachable_message(exc)
        if api:
            response: HttpResponse = JsonResponse(
                {
                    "detail": detail,
                    "database": database.database_address(),
                    "errors": [{"field": "", "type": "DatabaseUnavailable", "detail": detail}],
                },
                status=503,
            )
        else:
            page = render_to_string("503_database.html", {"message": detail})
            response = HttpResponse(page, status=503)
        response["Retry-After"] = "30"
        return response
    if api:
        return JsonResponse({"detail": "Server error; it has been logged."}, status=500)
    return defaults.server_error(request)
