"""Database faults: the store's connection cut in the middle of a transaction.

A worker's process may live while its database connection dies: PostgreSQL terminates the
backend (an admin's `pg_terminate_backend`, a failover, an idle-session timeout), a SQLite
connection is closed under it. The statement that was about to run fails, the server rolls the
open transaction back, and whatever the worker does next must not lose or repeat anything. The
cut is real: on PostgreSQL the backend is terminated by the server, from another connection.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy import Engine, create_engine, text
from sqlalchemy.pool import NullPool


class WriteSeam(Protocol):
    """A store's statement runner that calls `before_write(driver_connection, sql)` before
    each write; the reference store's `Store.db` is one."""

    engine: Engine
    before_write: Any


@dataclass
class SeverAt:
    """Cut the store's connection just before the `n`-th write statement (1-based) it runs,
    once (and only while `armed`); `severed` says which statement it was."""

    db: WriteSeam
    n: int
    writes: int = 0
    severed: str | None = None
    armed: bool = True
    _admin: Engine | None = field(default=None, repr=False)

    def __enter__(self) -> SeverAt:
        self.db.before_write = self._before
        return self

    def __exit__(self, *_: object) -> None:
        self.db.before_write = None
        if self._admin is not None:
            self._admin.dispose()

    def _before(self, driver: Any, sql: str) -> None:
        if self.severed is not None or not self.armed:
            return
        self.writes += 1
        if self.writes == self.n:
            self.severed = " ".join(sql.split()[:3])
            self._cut(driver)

    def _cut(self, driver: Any) -> None:
        if self.db.engine.dialect.name != "postgresql":
            driver.close()  # SQLite: the connection closed under the worker
            return
        if self._admin is None:
            self._admin = create_engine(self.db.engine.url, poolclass=NullPool)
        with self._admin.begin() as admin:
            pid = driver.info.backend_pid
            admin.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
