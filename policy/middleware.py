"""Authentication for every page (Django's LoginRequiredMiddleware), API pages included."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.middleware import LoginRequiredMiddleware as DjangoLoginRequired
from django.http import HttpRequest, HttpResponseBase
from rest_framework.renderers import TemplateHTMLRenderer
from rest_framework.views import APIView


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
        if _is_api_html_page(view_func) and not request.user.is_authenticated:
            return self.handle_no_permission(request, view_func)
        return super().process_view(request, view_func, view_args, view_kwargs)


def _is_api_html_page(view_func: Callable[..., Any]) -> bool:
    view_class = getattr(view_func, "cls", None)
    return (
        isinstance(view_class, type)
        and issubclass(view_class, APIView)
        and TemplateHTMLRenderer in view_class.renderer_classes
    )
