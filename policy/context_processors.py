"""Template context shared by every page."""

from __future__ import annotations

from django.http import HttpRequest

from policy.accounts.roles import roles_of


def roles(request: HttpRequest) -> dict[str, list[str]]:
    """``user_roles`` for the navigation bar (empty when logged out)."""
    return {"user_roles": roles_of(request.user)}
