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
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from operator import itemgetter
from typing import Any

from sqlalchemy import Boolean, Engine, Float, Integer, LargeBinary, String
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import ClauseElement
from sqlalchemy.types import NullType

Row = dict[str, Any]

COMPILED_CAP = 1024
# Types sqlite3 and psycopg take as Python gives them; SQLAlchemy's conversions for these
# (bytes to memoryview, int to float, bool to int) are no-ops for both drivers.
NATIVE = (String, Integer, Float, Boolean, LargeBinary, NullType)
_generation = 0  # bumped in every forked child: a connection of another generation is not ours


def _forked() -> None:
    global _generation
    _generation += 1


os.register_at_fork(after_in_child=_forked)


class Prepared:
    """One statement compiled for one database: its SQL and how to lay out its parameters."""

    __slots__ = ("_pick", "_processed", "literals", "order", "processors", "sql")

    def __init__(
        self,
        sql: str,
        order: tuple[str, ...] | None,  # parameter names in positional order; None: by name
        literals: Mapping[str, Any],  # values bound into the statement when it was built
        processors: Mapping[str, Callable[[Any], Any]],  # the column types' conversions
    ) -> None:
        self.sql, self.order, self.literals, self.processors = sql, order, literals, processors
        self._pick = itemgetter(*order) if order else None
        self._processed = tuple(
            (i, processors[name]) for i, name in enumerate(order or ()) if name in processors
        )

    def arguments(self, params: Mapping[str, Any]) -> Sequence[Any] | dict[str, Any]:
        if self.literals:
            params = {**self.literals, **params}
        if self.order is None:  # a named paramstyle (PostgreSQL)
            if not self.processors:
                return dict(params)
            return {
                k: v if v is None or k not in self.processors else self.processors[k](v)
                for k, v in params.items()
            }
        if self._pick is None:
            return ()
        picked = self._pick(params)
        if len(self.order) == 1:
            picked = (picked,)
        if not self._processed:
            return picked  # type: ignore[no-any-return]
        values = list(picked)
        for i, process in self._processed:
            if values[i] is not None:
                values[i] = process(values[i])
        return values


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

    def write(self, statement: ClauseElement, params: Mapping[str, Any]) -> int:
        """Run a statement that returns no rows; how many rows it changed."""
        database = self._database
        prepared = database.prepare(statement)
        arguments = prepared.arguments(params)
        if database.before_write is not None:
            database.before_write(self._cursor.connection, prepared.sql)
        try:
            return int(self._cursor.execute(prepared.sql, arguments).rowcount)
        except database.dbapi_error as exc:
            raise database.failed(prepared.sql, arguments, exc, self._cursor) from exc

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
            raise self._database.failed(prepared.sql, arguments, exc, cursor) from exc
        return Result(cursor.rowcount, rows)


class Transaction:
    """`with` it for a `Tx` whose statements commit together, or roll back on any exception."""

    __slots__ = ("_cursor", "_database")

    def __init__(self, database: Database, cursor: Any) -> None:
        self._database = database
        self._cursor = cursor

    def __enter__(self) -> Tx:
        begin, error = self._database.begin, self._database.dbapi_error
        if self._database.before_write is not None:
            self._database.before_write(self._cursor.connection, begin)
        try:
            self._cursor.execute(begin)
        except error as exc:
            raise self._database.failed(begin, (), exc, self._cursor) from exc
        return Tx(self._database, self._cursor)

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        error = self._database.dbapi_error
        if kind is not None:
            with suppress(error):  # the original error is the one worth raising
                self._cursor.execute("ROLLBACK")
            return
        try:
            self._cursor.execute("COMMIT")
        except error as exc:
            raise self._database.failed("COMMIT", (), exc, self._cursor) from exc


class _Connection:
    """A driver connection owned by one thread of one process, with its cursor."""

    def __init__(self, dbapi_connection: Any) -> None:
        self.dbapi = dbapi_connection
        self.cursor = dbapi_connection.cursor()
        self.generation = _generation


class Database:
    """Compiled statements and per-thread driver connections for one SQLAlchemy engine."""

    def __init__(self, engine: Engine, begin: str) -> None:
        self.engine = engine
        self.dialect = engine.dialect
        self.dbapi_error: type[Exception] = engine.dialect.loaded_dbapi.Error
        self.begin = begin
        self._schema_map = engine.get_execution_options().get("schema_translate_map")
        # by id, holding the statement so its id is not reused while cached; statements built
        # afresh per call (a mutant's, say) would grow it without end, hence the cap
        self._compiled: dict[int, tuple[ClauseElement, Prepared]] = {}
        self._local = threading.local()
        self.compiles = 0  # statements compiled so far: each should be, once
        self._open: weakref.WeakSet[_Connection] = weakref.WeakSet()
        self._inherited: list[_Connection] = []
        # a seam for database faults (`tests.support.db_faults`): called with the driver's
        # connection and the SQL before each write statement, a write transaction's BEGIN too
        self.before_write: Callable[[Any, str], None] | None = None

    def failed(self, sql: str, arguments: Any, exc: Any, cursor: Any) -> Exception:
        """The driver's error as SQLAlchemy's; a connection the server dropped is forgotten,
        so this thread's next statement opens a new one instead of failing on the dead one."""
        if self.dialect.is_disconnect(exc, cursor.connection, cursor):
            conn = getattr(self._local, "conn", None)
            if conn is not None and conn.cursor is cursor:
                self._local.conn = None
                self._open.discard(conn)
        error: Exception = DBAPIError.instance(sql, arguments, exc, self.dbapi_error)
        return error

    # -- statements ---------------------------------------------------------------------------

    def prepare(self, statement: ClauseElement) -> Prepared:
        cached = self._compiled.get(id(statement))
        if cached is not None:
            return cached[1]
        if len(self._compiled) >= COMPILED_CAP:
            self._compiled.clear()
        prepared = self._compile(statement)
        self._compiled[id(statement)] = (statement, prepared)
        return prepared

    def _compile(self, statement: ClauseElement) -> Prepared:
        self.compiles += 1
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
        processors = {
            name: process
            for name, process in compiled._bind_processors.items()
            if not isinstance(compiled.binds[name].type, NATIVE)
        }
        return Prepared(compiled.string, order, literals, processors)

    # -- connections and transactions ---------------------------------------------------------

    def _connection(self) -> _Connection:
        conn: _Connection | None = getattr(self._local, "conn", None)
        if conn is not None and conn.generation == _generation:
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
        conn = _Connection(dbapi)
        self._local.conn = conn
        self._open.add(conn)
        return conn

    def transaction(self) -> Transaction:
        """One write transaction; SQLite's begins IMMEDIATE, so writers queue at its start."""
        return Transaction(self, self._connection().cursor)

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
            if conn.generation == _generation:
                conn.dbapi.close()
        self._open = weakref.WeakSet()
        self._local = threading.local()
