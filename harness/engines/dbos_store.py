"""Where DBOS keeps one world's records, and reading them back for the oracle.

DBOS checkpoints a workflow in its *system database*: a `workflow_status` row (PENDING while it
runs, SUCCESS with its output once done), its input in `workflow_input`, and one
`operation_outputs` row per completed step, keyed by (workflow id, function id) and holding the
step's pickled return value. That row is the checkpoint: recovery re-runs the workflow function
and replays each step whose row exists instead of running it.

DBOS 3 also supports a SQLite system database (its default, `sqlite:///<app name>`), but it
recommends PostgreSQL for production, and that is what this adapter uses: the world's own
PostgreSQL schema when the store URL is PostgreSQL, otherwise a schema of its own on the server
named by `KILLPOINT_DBOS_URL` (default: this machine's `postgres@127.0.0.1:5432/test`),
derived from the world's work folder, so parallel worlds never meet, and dropped with the world.
Everything here is plain SQL on its own connection: the campaign process reads and resets the
store without ever starting DBOS (whose threads would not survive the real tier's forks).
"""

from __future__ import annotations

import base64
import hashlib
import os
import pickle
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from killpoint.harness.engines import units
from killpoint.harness.engines.units_reader import UnitsReader
from killpoint.harness.protocol import CheckpointRecord, StoreHandle
from killpoint.harness.run.databases import is_postgres, parse, schema_of
from killpoint.harness.scenario import Scenario

URL_ENV = "KILLPOINT_DBOS_URL"
DEFAULT_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
SHARED = "dbos.system-database"
SEGMENT = "@"  # a run continued after an approval is a new DBOS workflow: `<id>@2`, `<id>@3` …
KEEP = ("dbos_migrations",)  # what a reset leaves: the schema's version, so no re-migration


def segment_id(workflow_id: str, index: int) -> str:
    return workflow_id if index == 1 else f"{workflow_id}{SEGMENT}{index}"


@dataclass(frozen=True)
class Location:
    """A system database: the server's URL (no search_path) and the schema DBOS writes in."""

    url: str
    schema: str
    owned: bool  # derived by this adapter, so dropped with the world

    def for_dbos(self) -> str:
        return parse(self.url).render_as_string(hide_password=False)


def locate(handle: StoreHandle) -> Location:
    if is_postgres(handle.url):
        parsed = parse(handle.url)
        schema = schema_of(handle.url)
        base = parsed.difference_update_query(["options"]).render_as_string(hide_password=False)
        if schema:
            return Location(base, schema, owned=False)
        return Location(base, _derived(handle), owned=True)
    base = os.environ.get(URL_ENV) or DEFAULT_URL
    return Location(parse(base).render_as_string(hide_password=False), _derived(handle), True)


def _derived(handle: StoreHandle) -> str:
    digest = hashlib.sha256(str(handle.workdir.resolve()).encode()).hexdigest()[:12]
    return f"kp_dbos_{digest}"


class SystemDatabase:
    """Plain SQL on one world's DBOS schema: read, emptied, dropped (when it is ours).
    No pool: a forked worker inherits no connection."""

    def __init__(self, location: Location) -> None:
        self.location = location
        self.engine = sa.create_engine(parse(location.url), poolclass=NullPool)

    def _tables(self, conn: sa.Connection) -> list[str]:
        rows = conn.execute(
            sa.text("SELECT table_name FROM information_schema.tables WHERE table_schema = :s"),
            {"s": self.location.schema},
        )
        return [r[0] for r in rows]

    def clear(self) -> None:
        with self.engine.begin() as conn:
            tables = [t for t in self._tables(conn) if t not in KEEP]
            if tables:
                names = ", ".join(f'"{self.location.schema}"."{t}"' for t in tables)
                conn.execute(sa.text(f"TRUNCATE {names} CASCADE"))

    def segments(self, workflow_id: str) -> list[str]:
        """The DBOS workflows of one run, in order."""
        with self.engine.begin() as conn:
            if "workflow_status" not in self._tables(conn):
                return []
            rows = conn.execute(
                sa.text(
                    f'SELECT workflow_uuid FROM "{self.location.schema}".workflow_status '
                    "WHERE workflow_uuid = :w OR workflow_uuid LIKE :p"
                ),
                {"w": workflow_id, "p": f"{workflow_id}{SEGMENT}%"},
            )
            found = {r[0] for r in rows}
        return [segment_id(workflow_id, i) for i in range(1, len(found) + 1)]

    def step_outputs(self, workflow_id: str) -> list[tuple[str, str, Any]]:
        """(segment, step name, decoded output) of every recorded step, in DBOS's order."""
        rows: list[tuple[str, str, Any]] = []
        with self.engine.begin() as conn:
            for segment in self.segments(workflow_id):
                found = conn.execute(
                    sa.text(
                        "SELECT function_name, output, serialization FROM "
                        f'"{self.location.schema}".operation_outputs '
                        "WHERE workflow_uuid = :w ORDER BY function_id"
                    ),
                    {"w": segment},
                )
                rows += [(segment, r[0], decode(r[1], r[2])) for r in found]
        return rows

    def close(self) -> None:
        try:
            if self.location.owned:
                with self.engine.begin() as conn:
                    conn.execute(sa.text(f'DROP SCHEMA IF EXISTS "{self.location.schema}" CASCADE'))
        finally:
            self.engine.dispose()


def decode(output: str | None, serialization: str | None) -> Any:
    """A step output as DBOS stored it (its default serializer: base64 of a pickle)."""
    if output is None:
        return None
    if serialization not in (None, "py_pickle"):
        raise ValueError(f"unexpected DBOS serialization {serialization!r}")
    return pickle.loads(base64.b64decode(output))  # our own workers wrote it


def system_database(handle: StoreHandle) -> SystemDatabase:
    return handle.shared.get(SHARED, lambda: SystemDatabase(locate(handle)))


class DbosReader(UnitsReader):
    """A run's checkpoints as DBOS recorded them: one per step output row, numbered 1..n in
    (segment, function id) order; the size is the stored output's bytes."""

    def __init__(self, handle: StoreHandle, scenario: Scenario) -> None:
        super().__init__(handle, scenario)
        self.database = system_database(handle)

    def checkpoints(self, workflow_id: str) -> list[CheckpointRecord]:
        records = []
        for sequence, (_, _, state) in enumerate(self.database.step_outputs(workflow_id), 1):
            if not isinstance(state, dict):
                continue
            size = len(pickle.dumps(state))
            records.append(units.checkpoint_record(self.workflow, sequence, state, size))
        return records


def read_history(handle: StoreHandle, scenario: Scenario) -> DbosReader:
    return DbosReader(handle, scenario)


def reset(handle: StoreHandle) -> None:
    system_database(handle).clear()
    units.reset_folder(handle)
