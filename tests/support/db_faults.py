"""Database faults: the store's connection cut, its SQLite file locked or gone, mid-campaign.

A worker's process may live while its database fails under it: PostgreSQL terminates the
backend (an admin's `pg_terminate_backend`, a failover, an idle-session timeout), a SQLite
connection is closed under it, another process holds the SQLite file's lock past the busy
timeout (a backup, a second campaign, a `sqlite3` shell left in a transaction), or the file is
deleted (a clean-up job): the connection that has it open writes on to the unlinked inode while
a new one would make an empty store at the same path. Each fault strikes once, just before the
`n`-th statement of its kind, and is real: the backend is terminated by the server from another
connection, the lock is held by another process, the file is unlinked.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from sqlalchemy import Engine, create_engine, text
from sqlalchemy.pool import NullPool


class WriteSeam(Protocol):
    """A store's statement runner that calls `before_write(driver_connection, sql)` before
    each write statement and each write transaction's BEGIN; the reference store's `Store.db`
    is one."""

    engine: Engine
    before_write: Any


@dataclass
class StatementFault:
    """A fault that strikes just before the `n`-th write statement (1-based; a transaction's
    BEGIN when `at_begin`) the store runs, once, and only while `armed`; `at` says before
    which statement it struck."""

    at_begin: ClassVar[bool] = False

    db: WriteSeam
    n: int
    armed: bool = True
    seen: int = 0
    at: str | None = None

    def __enter__(self) -> StatementFault:
        self.db.before_write = self._before
        return self

    def __exit__(self, *_: object) -> None:
        self.db.before_write = None

    def _before(self, driver: Any, sql: str) -> None:
        if self.at is not None or not self.armed or sql.startswith("BEGIN") != self.at_begin:
            return
        self.seen += 1
        if self.seen == self.n:
            self.at = " ".join(sql.split()[:3])
            self.strike(driver)

    def strike(self, driver: Any) -> None:
        raise NotImplementedError

    @property
    def path(self) -> Path:
        """The SQLite file of the store."""
        database = self.db.engine.url.database
        if self.db.engine.dialect.name != "sqlite" or database in (None, "", ":memory:"):
            raise ValueError(f"{type(self).__name__} needs a SQLite file")
        return Path(str(database))


@dataclass
class SeverAt(StatementFault):
    """Cut the store's connection: terminated by the server (PostgreSQL), closed under the
    worker (SQLite)."""

    _admin: Engine | None = field(default=None, repr=False)

    def __exit__(self, *_: object) -> None:
        super().__exit__()
        if self._admin is not None:
            self._admin.dispose()

    def strike(self, driver: Any) -> None:
        if self.db.engine.dialect.name != "postgresql":
            driver.close()
            return
        if self._admin is None:
            self._admin = create_engine(self.db.engine.url, poolclass=NullPool)
        with self._admin.begin() as admin:
            pid = driver.info.backend_pid
            admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})


_HOLDER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("COMMIT")
"""


@dataclass
class LockAt(StatementFault):
    """Another process takes the SQLite file's exclusive lock before the `n`-th write
    transaction begins and holds it `hold_s`: the worker's BEGIN waits out its busy timeout."""

    at_begin: ClassVar[bool] = True
    hold_s: float = 1.0
    _holder: subprocess.Popen[str] | None = field(default=None, repr=False)

    def __exit__(self, *_: object) -> None:
        super().__exit__()
        if self._holder is not None:
            self._holder.kill()
            self._holder.wait()

    def strike(self, driver: Any) -> None:
        command = [sys.executable, "-c", _HOLDER, str(self.path), str(self.hold_s)]
        self._holder = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self._holder.stdout is not None
        if self._holder.stdout.readline().strip() != "locked":
            raise RuntimeError("the lock holder did not take the lock")


@dataclass
class VanishAt(StatementFault):
    """The SQLite file, its WAL and shared memory are deleted before the `n`-th write
    statement; the worker's open connection writes on to the unlinked files."""

    def strike(self, driver: Any) -> None:
        for suffix in ("", "-wal", "-shm"):
            self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
