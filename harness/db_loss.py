"""A database that goes away under a campaign: a death of its own kind, or a clear stop.

A worker whose store connection the server dropped (a restart, a failover, an admin's
`pg_terminate_backend`) died as surely as one the kill-switch killed: it is judged as a death,
not as the engine's own failure, and the next worker resumes once the database answers again.
When it does not come back in time, the campaign stops with one line instead of judging runs
that never had a database.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy import create_engine, make_url, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from killpoint.harness.contract.errors import KillpointError

T = TypeVar("T")
PATIENCE_S = 60.0
# what drivers say when the connection, not the statement, failed (psycopg, sqlite3)
_LOST = (
    "connection is lost",
    "connection failed",
    "server closed the connection",
    "terminating connection",
    "connection refused",
    "cannot operate on a closed database",
    "consuming input failed",
)


class DatabaseUnavailable(KillpointError):
    """The campaign's database went away and did not come back."""


def connection_lost(exc: BaseException) -> bool:
    """Whether `exc`, or an exception it was raised from, says the database connection died."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, DBAPIError) and seen.connection_invalidated:
            return True
        driver = type(seen).__name__ in ("OperationalError", "ProgrammingError", "InterfaceError")
        if driver and any(s in str(seen).lower() for s in _LOST):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def await_database(url: str, patience_s: float = PATIENCE_S) -> None:
    """Return once `url` answers a query; `DatabaseUnavailable` after `patience_s`."""
    engine = create_engine(url, poolclass=NullPool)
    deadline, problem = time.monotonic() + patience_s, ""
    try:
        while True:
            try:
                with engine.connect() as conn:
                    conn.execute(text("SELECT 1"))
                return
            except DBAPIError as exc:
                problem = str(exc.orig).splitlines()[0] if exc.orig else str(exc)
            if time.monotonic() > deadline:
                where = make_url(url).render_as_string(hide_password=True)
                raise DatabaseUnavailable(
                    f"the database at {where} went away during the campaign and did not come "
                    f"back within {patience_s:.0f} s ({problem})"
                )
            time.sleep(0.2)
    finally:
        engine.dispose()


def reconnecting(url: str, action: Callable[[], T]) -> T:
    """`action`, once more after the database is back if it failed on a lost connection."""
    try:
        return action()
    except Exception as exc:
        if not connection_lost(exc):
            raise
    await_database(url)
    return action()
