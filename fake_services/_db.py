"""One SQLite connection shared by the journal and the services' state.

The applied effect must be committed in the same transaction as the state change it describes,
so the journal tables and the state tables live in one database behind one connection. WAL mode
lets another process (the oracle, a test) read the file while a real-tier server writes it;
``synchronous=OFF`` survives the death of the process (the case we test), not of the OS.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS requests (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    service TEXT NOT NULL,
    operation TEXT NOT NULL,
    idempotency_key TEXT,
    business_key TEXT,
    fingerprint TEXT NOT NULL,
    time REAL NOT NULL,
    outcome TEXT NOT NULL,
    body TEXT,
    origin TEXT
);
CREATE INDEX IF NOT EXISTS requests_by_key ON requests (idempotency_key);
CREATE TABLE IF NOT EXISTS effects (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    request_seq INTEGER NOT NULL REFERENCES requests (seq),
    service TEXT NOT NULL,
    operation TEXT NOT NULL,
    business_key TEXT NOT NULL,
    idempotency_key TEXT,
    fingerprint TEXT NOT NULL,
    time REAL NOT NULL,
    resource_id TEXT NOT NULL,
    origin TEXT
);
CREATE INDEX IF NOT EXISTS effects_by_business_key ON effects (service, business_key);
CREATE TABLE IF NOT EXISTS resources (
    kind TEXT NOT NULL,
    id TEXT NOT NULL,
    idempotency_key TEXT,
    lookup TEXT,
    fingerprint TEXT,
    data TEXT NOT NULL,
    PRIMARY KEY (kind, id)
);
CREATE INDEX IF NOT EXISTS resources_by_key ON resources (kind, idempotency_key);
CREATE INDEX IF NOT EXISTS resources_by_lookup ON resources (kind, lookup);
CREATE TABLE IF NOT EXISTS blobs (
    sha256 TEXT PRIMARY KEY,
    media_type TEXT NOT NULL,
    data BLOB NOT NULL
);
"""

TABLES = ("effects", "requests", "resources", "blobs")


class Database:
    """A locked SQLite connection in autocommit mode with explicit write transactions."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = ":memory:" if path is None else str(path)
        self._conn = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=10.0
        )
        self._lock = threading.RLock()
        self._depth = 0
        # no other connection can write a private (in-memory) database; `epoch` moves whenever
        # rows may have gone (a rollback, a reset), so what a reader remembers is stale
        self.private = self.path == ":memory:"
        self.epoch = 0
        with self._lock:
            self._conn.execute("PRAGMA busy_timeout = 10000")
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode = WAL")
            # what must survive is the death of the process (a SIGKILLed server), which OFF
            # survives too: each commit is in the OS before it returns; no fsync for a fake
            self._conn.execute("PRAGMA synchronous = OFF")
            self._conn.executescript(SCHEMA)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group writes into one atomic commit; nested use joins the outer transaction."""
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self._conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield
            except BaseException:
                self.epoch += 1
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")
            finally:
                self._depth = 0

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        with self._lock:
            return self._conn.execute(sql, params)

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        with self._lock:
            row: tuple[Any, ...] | None = self._conn.execute(sql, params).fetchone()
            return row

    def clear(self) -> None:
        """Delete every row (the admin reset); the schema stays."""
        self.epoch += 1
        with self.transaction():
            for table in TABLES:
                self._conn.execute(f"DELETE FROM {table}")

    def close(self) -> None:
        with self._lock:
            self._conn.close()
