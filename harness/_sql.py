"""Core statements compiled once and run straight on the driver's connection.

A `Connection.execute` costs some 60 µs of Python per statement (cache key, events, result
setup): more than SQLite takes to run it, and a crash campaign runs about seventy statements per
cycle. So the store keeps SQLAlchemy Core as the one definition of its tables and statements for
both dialects, compiles each statement once per database, and executes the compiled text with
the DBAPI cursor of a connection each thread keeps for itself. Driver errors are raised as
SQLAlchemy's own exception classes, so callers see one error vocabulary whichever path ran.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import ClauseElement

Row = dict[str, Any]


@dataclass(frozen=True)
class Prepared:
    """One statement compiled for one database: its SQL and how to lay out its parameters."""

    sql: str
    order: tuple[str, ...] | None  # parameter names in positional order; None: by name
    literals: Mapping[str, Any]  # values bound into the statement when it was built
    processors: Mapping[str, Callable[[Any], Any]]

    def arguments(self, params: Mapping[str, Any]) -> tuple[Any, ...] | dict[str, Any]:
        values = {**self.literals, **params} if self.literals else dict(params)
        for name, process in self.processors.items():
            if name in values and values[name] is not None:
                values[name] = process(values[name])
        if self.order is None:
            return values
        return tuple(values[name] for name in self.order)


class Result:
    """What a statement returned: the rows as dicts (read eagerly) and the rows it changed."""

    __slots__ = ("rowcount", "rows")

    def __init__(self, rowcount: int, rows: list[Row]) -> None:
        self.rowcount = rowcount
        self.rows = rows

    def first(self) -> Row | None:
        return self.rows[0] if self.rows else None

    def scalar(self) -> Any:
        return next(iter(self.rows[0].values())) if self.rows else None

    def scalars(self) -> list[Any]:
        return [next(iter(r.values())) for r in self.rows]


class Tx:
    """Statements on one connection: inside a transaction, or each on its own (reads)."""

    __slots__ = ("_cursor", "_database")

    def __init__(self, database: Database, cursor: Any) -> None:
        self._database = database
        self._cursor = cursor

    def execute(self, statement: ClauseElement, params: Mapping[str, Any] | None = None) -> Result:
        prepared = self._database.prepare(statement)
        arguments = prepared.arguments(params or {})
        cursor = self._cursor
        try:
            cursor.execute(prepared.sql, arguments)
            description = cursor.description
            rows: list[Row] = []
            if description is not None:
                names = [d[0] for d in description]
                rows = [dict(zip(names, r, strict=True)) for r in cursor]
        except self._database.dbapi_error as exc:
            raise DBAPIError.instance(
                prepared.sql, arguments, exc, self._database.dbapi_error
            ) from exc
        return Result(cursor.rowcount, rows)


class _Connection:
    """A driver connection owned by one thread of one process, with its cursor."""

    def __init__(self, dbapi_connection: Any, pid: int) -> None:
        self.dbapi = dbapi_connection
        self.cursor = dbapi_connection.cursor()
        self.pid = pid


class Database:
    """Compiled statements and per-thread driver connections for one SQLAlchemy engine."""

    def __init__(self, engine: Engine, begin: str) -> None:
        self.engine = engine
        self.dialect = engine.dialect
        self.dbapi_error: type[Exception] = engine.dialect.loaded_dbapi.Error
        self._begin = begin
        self._schema_map = engine.get_execution_options().get("schema_translate_map")
        self._compiled: weakref.WeakKeyDictionary[ClauseElement, Prepared] = (
            weakref.WeakKeyDictionary()
        )
        self._local = threading.local()
        self._open: weakref.WeakSet[_Connection] = weakref.WeakSet()
        self._inherited: list[_Connection] = []

    # -- statements ---------------------------------------------------------------------------

    def prepare(self, statement: ClauseElement) -> Prepared:
        prepared = self._compiled.get(statement)
        if prepared is None:
            prepared = self._compiled[statement] = self._compile(statement)
        return prepared

    def _compile(self, statement: ClauseElement) -> Prepared:
        compiled: Any = statement.compile(
            dialect=self.dialect,
            schema_translate_map=self._schema_map,
            render_schema_translate=self._schema_map is not None,
        )
        if any(b.expanding for b in compiled.binds.values()):
            raise TypeError("expanding IN parameters are not supported: bind each value")
        required = {name for name, b in compiled.binds.items() if b.required}
        literals = {
            k: v for k, v in compiled.construct_params(_check=False).items() if k not in required
        }
        order = tuple(compiled.positiontup) if compiled.positional else None
        return Prepared(compiled.string, order, literals, dict(compiled._bind_processors))

    # -- connections and transactions ---------------------------------------------------------

    def _connection(self) -> _Connection:
        conn: _Connection | None = getattr(self._local, "conn", None)
        if conn is not None and conn.pid == os.getpid():
            return conn
        if conn is not None:  # forked without after_fork: the parent's, keep it untouched
            self._inherited.append(conn)
        return self._connect()

    def _connect(self) -> _Connection:
        pooled = self.engine.raw_connection()
        dbapi: Any = pooled.driver_connection
        pooled.detach()  # ours alone: never handed back to SQLAlchemy's pool
        if self.dialect.name == "postgresql":
            dbapi.autocommit = True  # transactions are begun explicitly, like SQLite's
        conn = _Connection(dbapi, os.getpid())
        self._local.conn = conn
        self._open.add(conn)
        return conn

    @contextmanager
    def transaction(self) -> Iterator[Tx]:
        """One write transaction; SQLite's begins IMMEDIATE, so writers queue at its start."""
        conn = self._connection()
        cursor = conn.cursor
        try:
            cursor.execute(self._begin)
        except self.dbapi_error as exc:
            raise DBAPIError.instance(self._begin, (), exc, self.dbapi_error) from exc
        try:
            yield Tx(self, cursor)
        except BaseException:
            with suppress(self.dbapi_error):  # the original error is the one worth raising
                cursor.execute("ROLLBACK")
            raise
        try:
            cursor.execute("COMMIT")
        except self.dbapi_error as exc:
            raise DBAPIError.instance("COMMIT", (), exc, self.dbapi_error) from exc

    def reading(self) -> Tx:
        """Statements that each commit on their own: reads outside any transaction."""
        return Tx(self, self._connection().cursor)

    def after_fork(self) -> None:
        """In a forked child: never touch the parent's connections, not even to close them.

        Closing a PostgreSQL connection sends the server a goodbye on the socket the parent
        still uses, so the inherited objects are kept alive (never finalized) and unused."""
        self._inherited.extend(self._open)
        self._open = weakref.WeakSet()
        self._local = threading.local()

    def close(self) -> None:
        for conn in list(self._open):
            if conn.pid == os.getpid():
                conn.dbapi.close()
        self._open = weakref.WeakSet()
        self._local = threading.local()
