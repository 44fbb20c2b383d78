"""Who is changing what: the change context, the change log, and the refusal log.

Every service that changes a policy takes a :class:`ChangeContext` and writes one
:class:`~policy.accounts.models.PolicyChange` per object it changes, in the same transaction as the
change itself (NetBox's ObjectChange, written explicitly instead of from signals).
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.contrib.contenttypes.models import ContentType
from django.http import HttpRequest

from policy.accounts.models import ApiToken, AuthorizationFailure, PolicyChange
from policy.core import broker
from policy.core.choices import ChangeSource
from policy.core.models import VersionedModel

logger = logging.getLogger("policy.audit")

REQUEST_ID_HEADER = "X-Request-ID"


@dataclass(frozen=True)
class ChangeContext:
    """The author of a change: user, source (UI, API session, API token, system), address."""

    user: User | None
    source: str
    token_name: str = ""
    remote_addr: str | None = None
    request_id: uuid.UUID = field(default_factory=uuid.uuid4)

    @property
    def user_name(self) -> str:
        return self.user.get_username() if self.user is not None else ""

    @classmethod
    def system(cls) -> ChangeContext:
        return cls(user=None, source=ChangeSource.SYSTEM)

    @classmethod
    def from_request(cls, request: Any, *, ui: bool = False) -> ChangeContext:
        """From a Django or DRF request; ``request.auth`` is the token when one was used."""
        user = getattr(request, "user", None)
        if user is None or isinstance(user, AnonymousUser) or not user.is_authenticated:
            user = None
        token = getattr(request, "auth", None)
        if ui:
            source = ChangeSource.UI
        elif isinstance(token, ApiToken):
            source = ChangeSource.TOKEN
        else:
            source = ChangeSource.API
        return cls(
            user=user,
            source=source,
            token_name=token.name if isinstance(token, ApiToken) else "",
            remote_addr=client_address(request),
            request_id=request_id(request),
        )


def client_address(request: Any) -> str | None:
    """``REMOTE_ADDR`` when it is an IP address (the proxy's, behind one)."""
    meta = getattr(request, "META", {})
    address = str(meta.get("REMOTE_ADDR") or "")
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return None


def request_id(request: Any) -> uuid.UUID:
    """The id :class:`~policy.middleware.RequestIdMiddleware` gave the request (or a new one)."""
    django_request: HttpRequest = getattr(request, "_request", request)
    value = getattr(django_request, "request_id", None)
    if isinstance(value, uuid.UUID):
        return value
    value = uuid.uuid4()
    with contextlib.suppress(AttributeError):
        django_request.request_id = value  # type: ignore[attr-defined]
    return value


def record_change(
    ctx: ChangeContext,
    obj: VersionedModel,
    action: str,
    *,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    message: str = "",
) -> PolicyChange:
    """Write one change-log row for ``obj`` (call inside the change's transaction); the
    cluster's prepared views are refreshed once it commits (they depend on its policies)."""
    cluster_id = obj.cluster_id_for_history()
    if cluster_id is not None:
        broker.prepare_views(cluster_id)
    return PolicyChange.objects.create(
        user=ctx.user,
        user_name=ctx.user_name,
        source=ctx.source,
        token_name=ctx.token_name,
        remote_addr=ctx.remote_addr,
        request_id=ctx.request_id,
        action=action,
        content_type=ContentType.objects.get_for_model(type(obj)),
        object_id=obj.pk,
        object_repr=str(obj)[:200],
        object_version=obj.version,
        cluster_id=obj.cluster_id_for_history(),
        message=message[:500],
        prechange_data=before,
        postchange_data=after,
    )


def history(obj: VersionedModel) -> Any:
    """The change-log rows of ``obj``, newest first."""
    return history_of(type(obj), obj.pk)


def history_of(model: type[VersionedModel], pk: int) -> Any:
    """The change-log rows of the ``model`` object ``pk``, newest first; they outlive it, so a
    deleted object's history stays readable."""
    return PolicyChange.objects.filter(
        content_type=ContentType.objects.get_for_model(model), object_id=pk
    )


def record_denied(ctx: ChangeContext, *, method: str, path: str, status: int, reason: str) -> None:
    """Log a refused request (403) and keep it as an :class:`AuthorizationFailure` row."""
    logger.warning(
        "authorization failure: user=%s source=%s token=%s addr=%s %s %s -> %s: %s",
        ctx.user_name or "-",
        ctx.source,
        ctx.token_name or "-",
        ctx.remote_addr or "-",
        method,
        path,
        status,
        reason,
        extra={"request_id": str(ctx.request_id)},
    )
    AuthorizationFailure.objects.create(
        user=ctx.user,
        user_name=ctx.user_name,
        source=ctx.source,
        token_name=ctx.token_name,
        remote_addr=ctx.remote_addr,
        request_id=ctx.request_id,
        method=method[:16],
        path=path[:2000],
        status_code=status,
        reason=reason[:500],
    )
