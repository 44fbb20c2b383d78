"""ETag / If-Match: optimistic concurrency for every policy object.

An object's ETag is ``W/"<version>"``. Writes (PUT, PATCH, DELETE, revert, import onto an
existing configuration) must send ``If-Match`` with the ETag the client read, or ``*`` to
overwrite whatever is there: a different version gets 412 Precondition Failed, no header 428
Precondition Required. The service re-checks the version under ``select_for_update``, so two
clients that read the same version cannot both write.
"""

from __future__ import annotations

import re

from rest_framework import exceptions, status
from rest_framework.request import Request

ANY = -1  # If-Match: *

_ETAG = re.compile(r'^\s*(?:W/)?"(\d{1,10})"\s*$')


class PreconditionFailed(exceptions.APIException):
    status_code = status.HTTP_412_PRECONDITION_FAILED
    default_detail = "The object changed since you read it; read it again, then retry."
    default_code = "precondition_failed"


class PreconditionRequired(exceptions.APIException):
    status_code = status.HTTP_428_PRECONDITION_REQUIRED
    default_detail = (
        'This request needs an If-Match header with the object\'s ETag (W/"<version>"), '
        "or If-Match: * to overwrite whatever is there."
    )
    default_code = "precondition_required"


def etag(version: int) -> str:
    return f'W/"{version}"'


def expected_version(request: Request, current: int | None = None) -> int | None:
    """The version ``If-Match`` names (None for ``*``); 428 without the header, 412 when it
    names no version or (given ``current``) not the current one."""
    header = request.headers.get("If-Match")
    if header is None or not header.strip():
        raise PreconditionRequired()
    if header.strip() == "*":
        return None
    versions = []
    for part in header.split(","):
        match = _ETAG.match(part)
        if match:
            versions.append(int(match[1]))
    if not versions:
        raise PreconditionFailed(f"If-Match {header[:100]!r} names no version of this object.")
    if current is not None and current not in versions:
        raise stale(current)
    return current if current is not None else versions[0]


def stale(current: int) -> PreconditionFailed:
    return PreconditionFailed(
        f"The object is now at version {current} (ETag {etag(current)}); read it again, then retry."
    )
