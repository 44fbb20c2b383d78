"""API token authentication: ``Authorization: Token <key>`` (or ``Bearer <key>``)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request

from policy.accounts.models import ApiToken

KEYWORDS = ("token", "bearer")


class ReadOnlyToken(exceptions.PermissionDenied):
    """A read-only token used for a write: refused at authentication, before DRF knows the
    request's user, so the refusal carries the token (and its owner) for the audit record."""

    def __init__(self, token: ApiToken, method: str) -> None:
        super().__init__(f"This token is read-only: it cannot be used for {method} requests.")
        self.token = token


# last_used is written at most this often per token, not on every request.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class TokenAuthentication(BaseAuthentication):
    """Authenticates by API token; ``request.auth`` is the :class:`ApiToken`.

    A read-only token is refused (403) on every unsafe method here, at authentication, so no
    view can forget the check by overriding its permission classes.
    """

    def authenticate(self, request: Request) -> tuple[object, ApiToken] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower().decode(errors="replace") not in KEYWORDS:
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(
                "Invalid Authorization header: expected 'Token <key>' with no spaces in the key."
            )
        token = self._token(parts[1].decode(errors="replace"))
        if not token.write_enabled and request.method not in SAFE_METHODS:
            raise ReadOnlyToken(token, str(request.method))
        self._touch(token)
        return token.owner, token

    def authenticate_header(self, request: Request) -> str:
        return 'Token realm="api"'

    @staticmethod
    def _token(key: str) -> ApiToken:
        try:
            token = ApiToken.objects.select_related("owner").get(key_hash=ApiToken.hash_key(key))
        except ApiToken.DoesNotExist:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        if token.is_expired():
            raise exceptions.AuthenticationFailed("Token expired.")
        if not token.owner.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        return token

    @staticmethod
    def _touch(token: ApiToken) -> None:
        now = timezone.now()
        if token.last_used is None or now - token.last_used >= LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=token.pk).update(last_used=now)
            token.last_used = now
