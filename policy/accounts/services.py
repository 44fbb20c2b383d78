"""API tokens: created with a key shown once, bounded by the token that makes them."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from policy.accounts.models import ApiToken
from policy.core.errors import ServiceError


def create_token(
    owner: User,
    *,
    name: str,
    write_enabled: bool = True,
    expires: datetime | None = None,
    creator: ApiToken | None = None,
) -> tuple[ApiToken, str]:
    """Create a token for ``owner``; returns it with its key, which is not stored anywhere.

    ``creator`` is the token authenticating the request, if any: a token cannot mint one
    with more rights than itself (write access, a later or no expiry).
    """
    if creator is not None:
        _check_within(creator, write_enabled, expires)
    token = ApiToken(owner=owner, name=name, write_enabled=write_enabled, expires=expires)
    key = ApiToken.generate_key()
    token.set_key(key)
    try:
        with transaction.atomic():
            token.save()
    except IntegrityError:  # a concurrent request took the name since it was validated
        raise ServiceError("name", f"You already have a token named {name!r}.") from None
    return token, key


def revoke_token(token: ApiToken) -> None:
    """Revoke (delete) a token: requests using its key fail from now on."""
    token.delete()


def _check_within(creator: ApiToken, write_enabled: bool, expires: datetime | None) -> None:
    if write_enabled and not creator.write_enabled:
        raise ServiceError("write_enabled", "A read-only token cannot create a write token.")
    if creator.expires is None:
        return
    if expires is None or expires > creator.expires:
        raise ServiceError(
            "expires",
            f"This token expires at {creator.expires.isoformat()}; "
            "the new token must expire no later.",
        )
