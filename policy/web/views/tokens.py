"""Your API tokens: create one (its key is shown once, on the answer to the creation),
list them, revoke one."""

from __future__ import annotations

from typing import cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_http_methods, require_POST

from policy.accounts import services as token_services
from policy.accounts.models import ApiToken
from policy.core.errors import ServiceError
from policy.web.forms.tokens import TokenForm


def _page(
    request: HttpRequest, form: TokenForm, created: tuple[ApiToken, str] | None
) -> HttpResponse:
    context = {
        "form": form,
        "tokens": ApiToken.objects.filter(owner_id=request.user.pk),
        "created": created[0] if created else None,
        "key": created[1] if created else None,
    }
    response = render(request, "policy/tokens.html", context, status=400 if form.errors else 200)
    add_never_cache_headers(response)  # the answer to a creation carries the key
    return response


@login_required
@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    """The list and the creation form. A creation is answered with the page itself, showing the
    key this once (not stored, not in a redirect); reloading it cannot create a second token,
    since the name is taken."""
    owner = cast(User, request.user)
    if request.method != "POST":
        return _page(request, TokenForm(owner=owner), None)
    form = TokenForm(request.POST, owner=owner)
    if not form.is_valid():
        return _page(request, form, None)
    try:
        created = token_services.create_token(owner, **form.cleaned_data)
    except ServiceError as exc:
        form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        return _page(request, form, None)
    return _page(request, TokenForm(owner=owner), created)


@login_required
@require_POST
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, pk=pk, owner_id=request.user.pk)
    name = token.name
    token_services.revoke_token(token)
    messages.success(request, f"Token {name!r} revoked: requests using its key now fail.")
    return redirect("token-list")
