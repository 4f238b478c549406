"""A database that fails under a campaign: a death of its own kind, or a clear stop.

A worker whose store connection the server dropped (a restart, a failover, an admin's
`pg_terminate_backend`), or whose SQLite file another process kept locked past the busy timeout,
died as surely as one the kill-switch killed: it is judged as a death, not as the engine's own
failure, and the next worker resumes once the database answers (and, SQLite, takes a write)
again. When it does not come back in time, the campaign stops with one line instead of judging
runs that never had a database. A SQLite file deleted or replaced under a campaign never comes
back: a new worker would open an empty store at its path and start the workflow over, repeating
its effects, so the campaign stops before the next worker (`StoreFile`).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from sqlalchemy import create_engine, make_url, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from killpoint.contract.errors import KillpointError

T = TypeVar("T")
PATIENCE_S = 60.0
LOST, LOCKED = "database connection lost", "database locked"
# what drivers say when the connection, not the statement, failed (psycopg, sqlite3); a driver's
# error may come as a subclass of these (psycopg's `AdminShutdown` is an `OperationalError`)
_LOST = (
    "connection is lost",
    "connection failed",
    "server closed the connection",
    "terminating connection",
    "connection refused",
    "cannot operate on a closed database",
    "consuming input failed",
)
_DRIVER_ERRORS = ("OperationalError", "ProgrammingError", "InterfaceError")


class DatabaseUnavailable(KillpointError):
    """The campaign's database went away, or stayed locked, and did not come back."""


def database_fault(exc: BaseException) -> str | None:
    """`LOST` or `LOCKED` when `exc`, or an exception it was raised from, says the database
    failed the worker (its connection died, its SQLite file stayed locked past the busy
    timeout); None for any other error, the engine's own."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, DBAPIError) and seen.connection_invalidated:
            return LOST
        if any(kind.__name__ in _DRIVER_ERRORS for kind in type(seen).__mro__):
            said = str(seen).lower()
            if any(s in said for s in _LOST):
                return LOST
            if "database is locked" in said:
                return LOCKED
        seen = seen.__cause__ or seen.__context__
    return None


def await_database(url: str, patience_s: float | None = None) -> None:
    """Return once `url` answers (a SQLite file: takes a write transaction); after
    `patience_s` (`PATIENCE_S`), `DatabaseUnavailable`. A SQLite file that is gone is never
    made anew here: `DatabaseUnavailable` at once."""
    patience = PATIENCE_S if patience_s is None else patience_s
    deadline = time.monotonic() + patience
    while True:
        problem = _problem(url)
        if problem is None:
            return
        if time.monotonic() > deadline:
            where = make_url(url).render_as_string(hide_password=True)
            if "locked" in problem:
                raise DatabaseUnavailable(
                    f"the database at {where} stayed locked by another process for "
                    f"{patience:.0f} s past its busy timeout ({problem})"
                )
            raise DatabaseUnavailable(
                f"the database at {where} went away during the campaign and did not come "
                f"back within {patience:.0f} s ({problem})"
            )
        time.sleep(0.2)


def _problem(url: str) -> str | None:
    """Why the database does not answer now; None when it does."""
    path = sqlite_path(url)
    if path is not None:
        return _sqlite_problem(path)
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        return None
    except DBAPIError as exc:
        return str(exc.orig).splitlines()[0] if exc.orig else str(exc)
    finally:
        engine.dispose()


def _sqlite_problem(path: Path) -> str | None:
    """Whether a write transaction begins on the file, opened without creating it."""
    if not path.exists():
        raise vanished(path)
    try:
        db = sqlite3.connect(f"file:{quote(str(path))}?mode=rw", uri=True, timeout=0.1)
    except sqlite3.Error as exc:
        return str(exc)
    try:
        db.isolation_level = None
        db.execute("BEGIN IMMEDIATE")
        db.execute("ROLLBACK")
        return None
    except sqlite3.Error as exc:
        return str(exc)
    finally:
        db.close()


def reconnecting(url: str, action: Callable[[], T]) -> T:
    """`action`, once more after the database is back if the database failed it."""
    try:
        return action()
    except Exception as exc:
        if database_fault(exc) is None:
            raise
    await_database(url)
    return action()


def sqlite_path(url: str) -> Path | None:
    """The file of a SQLite URL; None for PostgreSQL or an in-memory database."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(str(parsed.database))


def vanished(path: Path, replaced: bool = False) -> DatabaseUnavailable:
    how = "was replaced by another file" if replaced else "was deleted"
    return DatabaseUnavailable(
        f"the store file {path} {how} during the campaign: a new worker would open an empty "
        "store there and start its workflow over, so the campaign stops"
    )


class StoreFile:
    """A world's SQLite file as first seen (device and inode): once seen, gone or another
    file is a stop (`check`). Nothing to watch on PostgreSQL."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.path = sqlite_path(url)
        self.seen: tuple[int, int] | None = None

    def check(self) -> None:
        if self.path is None:
            return
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            if self.seen is not None:
                raise vanished(self.path) from None
            return
        identity = (stat.st_dev, stat.st_ino)
        if self.seen is not None and identity != self.seen:
            raise vanished(self.path, replaced=True)
        self.seen = identity

    def forget(self) -> None:
        """The engine's reset may delete and remake its file: what comes next is the file."""
        self.seen = None
