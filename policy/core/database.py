"""Saying plainly that the database cannot be reached, and which one (no credentials)."""

from __future__ import annotations

from django.conf import settings
from django.db import InterfaceError, OperationalError

# SQLSTATE classes of a server that cannot be reached or is going away (08: connection
# exception; 57P01-57P03: shut down, crashed, starting up). A deadlock or a serialization
# failure is an OperationalError too, but of a database that answers.
_UNREACHABLE_STATES = ("08", "57P01", "57P02", "57P03")


def database_address() -> str:
    """``engine://host:port/name`` of the default database, without user or password."""
    db = settings.DATABASES["default"]
    engine = str(db.get("ENGINE", "")).rsplit(".", 1)[-1]
    if engine == "sqlite3":
        return f"sqlite:///{db.get('NAME', '')}"
    host = db.get("HOST") or "localhost"
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"{engine}://{host}{port}/{db.get('NAME', '')}"


def unreachable(exc: BaseException | None) -> bool:
    """Whether ``exc`` says the database cannot be reached (rather than refusing a query)."""
    if isinstance(exc, InterfaceError):
        return True
    if not isinstance(exc, OperationalError):
        return False
    state = getattr(exc.__cause__, "sqlstate", None)
    return state is None or str(state).startswith(_UNREACHABLE_STATES)


def unreachable_message(exc: BaseException) -> str:
    return (
        f"The database ({database_address()}) cannot be reached: {type(exc).__name__}. "
        "Nothing was changed by this request; try again once it is back."
    )
