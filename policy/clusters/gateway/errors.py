"""What can go wrong when schedboard talks to a cluster, sorted by what the caller should do.

- :class:`TransientError`: the API server or the network hiccupped (5xx, 429, timeouts,
  connection refused). Already retried with backoff; raised once the retries ran out, so a
  later attempt (the next Celery retry) may succeed.
- :class:`ConflictError`: 409, someone else changed the object first. The apply functions
  re-read and re-plan; this escapes only when the conflicts never stop.
- :class:`PermanentError`: the request itself is wrong or not allowed (400, 401, 403, 404 on a
  write, 422). Retrying cannot help; ``message`` is the API server's own explanation.
- :class:`ConfigurationError`: the connection settings are unusable (no such kubeconfig,
  context or service account).

Every message is redacted: no token, password or key reaches a log, the UI or the API.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from policy.clusters.gateway.redact import redact

if TYPE_CHECKING:
    from policy.clusters.gateway.changes import Change


class GatewayError(Exception):
    """Base class; ``str()`` is safe to show (credentials redacted)."""

    def __init__(self, message: str, *, status: int | None = None, reason: str = "") -> None:
        self.message = redact(message)
        self.status = status
        self.reason = reason
        super().__init__(self.message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r}, status={self.status!r})"


class ConfigurationError(GatewayError):
    """The cluster's connection settings cannot be used."""


class TransientError(GatewayError):
    """A failure that may go away: raised after the retries ran out."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 1) -> None:
        super().__init__(message, status=status)
        self.attempts = attempts


class PermanentError(GatewayError):
    """The API server refused the request for a reason retrying cannot fix."""


class ConcurrentEdit(PermanentError):
    """Another client changed a field this push writes between its plan and its write.

    Writing anyway would put a value over theirs that nobody confirmed, so the write stops;
    the message shows the planned value, theirs and ours, and a new plan shows the change.
    """

    def __init__(self, where: str, planned: object, now: object, ours: object) -> None:
        super().__init__(
            f"{where} was changed by another client during the push: planned from "
            f"{_shown(planned)}, it is now {_shown(now)}; schedboard did not write "
            f"{_shown(ours)} over it. Review the new plan.",
            status=409,
        )


def _shown(value: object) -> str:
    return "absent" if value is None else json.dumps(value) if not isinstance(value, str) else value


class NotFoundError(PermanentError):
    """404: the object (or its kind, when a CRD is not installed) does not exist."""


class ConflictError(GatewayError):
    """409: the object changed (or appeared) since it was read."""


class ResourceVersionExpired(GatewayError):
    """410 Gone: a list continuation or watch asked for a version etcd compacted away."""


class ApplyError(GatewayError):
    """An apply stopped part-way: ``applied`` were written (each one whole), the rest not.

    Each write is a single object update with a resourceVersion precondition, so there is no
    half-written object; callers record ``applied`` (and ``owned``) and retry the rest.
    """

    def __init__(
        self,
        cause: GatewayError,
        applied: Sequence[Change],
        owned: frozenset[str] | None = None,
    ) -> None:
        super().__init__(
            f"{cause.message} (after {len(applied)} change(s) were applied)",
            status=cause.status,
            reason=cause.reason,
        )
        self.cause = cause
        self.applied = list(applied)
        self.owned = owned
