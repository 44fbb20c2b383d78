"""Roles: who may read, edit policies, and push them to clusters.

A role is membership of the Django group of that name (created by a data migration). Roles
are ordered, viewer < editor < operator, and each includes the ones before it; superusers
hold every role. Pages use :func:`role_required`, the API the DRF permission classes below.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.apps import apps as global_apps
from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.models import User as DjangoUser
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from policy.core.choices import Role

ROLE_ORDER: tuple[str, ...] = (Role.VIEWER, Role.EDITOR, Role.OPERATOR)
_CACHE_ATTR = "_schedboard_roles"

User = DjangoUser | AnonymousUser


def ensure_role_groups(*, using: str = "default", apps: Any = None, **_: Any) -> None:
    """``post_migrate`` receiver: every role's group exists. Migration 0002 creates them once;
    this brings them back after anything that empties the table (``manage.py flush``, a
    deleted group), as Django does for content types and permissions."""
    group = (apps or global_apps).get_model("auth", "Group")
    for name in ROLE_ORDER:
        group.objects.using(using).get_or_create(name=name)


def roles_of(user: User) -> list[str]:
    """The roles ``user`` holds, implied ones included, in order (cached on the user)."""
    if not user.is_authenticated or not user.is_active:
        return []
    cached: list[str] | None = getattr(user, _CACHE_ATTR, None)
    if cached is None:
        if getattr(user, "is_superuser", False):
            cached = list(ROLE_ORDER)
        else:
            names = set(user.groups.filter(name__in=ROLE_ORDER).values_list("name", flat=True))
            highest = max((ROLE_ORDER.index(name) for name in names), default=-1)
            cached = list(ROLE_ORDER[: highest + 1])
        setattr(user, _CACHE_ATTR, cached)
    return cached


def has_role(user: User, role: str) -> bool:
    """Whether ``user`` holds ``role`` or a higher one."""
    return role in roles_of(user)


def can_edit_policy(user: User) -> bool:
    return has_role(user, Role.EDITOR)


def can_push_policy(user: User) -> bool:
    return has_role(user, Role.OPERATOR)


View = Callable[..., HttpResponse]


def role_required(role: str) -> Callable[[View], View]:
    """View decorator: 403 page unless the (logged-in) user holds ``role``."""

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not has_role(request.user, role):
                raise PermissionDenied(f"This page needs the {role} role.")
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


class _RolePermission(BasePermission):
    """Grants a request when the user holds ``read_role`` (safe methods) or ``write_role``."""

    read_role: str = Role.VIEWER
    write_role: str = Role.VIEWER

    def has_permission(self, request: Request, view: Any) -> bool:
        role = self.read_role if request.method in SAFE_METHODS else self.write_role
        self.message = f"This action needs the {role} role."
        return has_role(request.user, role)


class IsViewer(_RolePermission):
    """Any viewer, whatever the method: for read-only endpoints and harmless actions."""


class CanEditPolicy(_RolePermission):
    """Viewers read; editors (and operators) write."""

    write_role = Role.EDITOR


class CanConfigureCluster(_RolePermission):
    """Viewers read; operators change where and when policies are pushed."""

    write_role = Role.OPERATOR


class CanPushPolicy(_RolePermission):
    """Only operators, whatever the method: pushing changes a live cluster."""

    read_role = write_role = Role.OPERATOR
