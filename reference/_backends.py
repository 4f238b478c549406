"""Where the backends differ: how an engine is built and how a write transaction begins.

SQLite needs `BEGIN IMMEDIATE` so two writers serialize at the start of a transaction instead of
failing on a lock upgrade, WAL so readers never block the writer, and a busy timeout (30 s, or
the URL's `?timeout=SECONDS`: how long a writer waits for another's lock). PostgreSQL
needs nothing special: a guarded `UPDATE … WHERE` is atomic under READ COMMITTED.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.exc import ArgumentError

from killpoint.contract.errors import KillpointError

DATABASE_URL_ENV = "KILLPOINT_DATABASE_URL"
DEFAULT_SQLITE_PATH = "killpoint-out/killpoint.sqlite"
BUSY_TIMEOUT_S = 30.0


def resolve_url(url: str | None) -> str:
    """An explicit URL, else `$KILLPOINT_DATABASE_URL`, else the embedded SQLite file."""
    chosen = url or os.environ.get(DATABASE_URL_ENV) or f"sqlite:///{DEFAULT_SQLITE_PATH}"
    try:
        parsed = make_url(chosen)
    except ArgumentError as exc:
        raise KillpointError(f"not a database URL: {chosen!r}") from exc
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise KillpointError(
            f"unsupported database {parsed.get_backend_name()!r} in {chosen!r}: "
            "use sqlite:///PATH or postgresql+psycopg://USER@HOST/DB"
        )
    if parsed.get_backend_name() == "postgresql" and parsed.drivername == "postgresql":
        chosen = parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    return chosen


def begin_statement(url: str) -> str:
    """How a write transaction begins on this backend."""
    return "BEGIN IMMEDIATE" if make_url(url).get_backend_name() == "sqlite" else "BEGIN"


def build_engine(url: str, *, scratch: bool = False) -> Engine:
    """An engine for `url`; a `scratch` database need only survive the death of processes.

    That is all killpoint injects, and all a campaign's own store must survive; a power loss
    need not be survived. So SQLite skips the fsync of its WAL checkpoints (synchronous=OFF:
    every commit still reaches the OS before it returns, so a killed process loses nothing),
    and PostgreSQL does not wait for the WAL flush of a commit (synchronous_commit=off: the
    server, which is never killed, holds what it acknowledged)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(url, scratch)
    engine = create_engine(url, pool_pre_ping=False, pool_size=2, max_overflow=8)
    if scratch:

        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            with dbapi_conn.cursor() as cursor:
                cursor.execute("SET synchronous_commit TO off")
            dbapi_conn.commit()

    return engine


def _sqlite_engine(url: str, scratch: bool) -> Engine:
    database = make_url(url).database
    if database and database != ":memory:":
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    busy = {} if "timeout" in make_url(url).query else {"timeout": BUSY_TIMEOUT_S}
    engine = create_engine(url, connect_args=busy)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # let the begin hook below own the transaction
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode survives the death of the process without an fsync per commit,
        # and a power loss without corruption (the fsync comes at each WAL checkpoint)
        cursor.execute("PRAGMA synchronous=OFF" if scratch else "PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # straight to the driver: the statement needs none of SQLAlchemy's execution machinery
        conn.connection.driver_connection.execute("BEGIN IMMEDIATE")

    return engine
