"""Databases that belong to one world alone: a SQLite file in its folder, or a PostgreSQL schema.

Runs name workflows after their scenario and schedule (`order_saga:clean`), so two campaigns —
two test sessions, two xdist workers, two CI jobs on one server — must never share tables. A
world on SQLite gets a file in its own folder; on PostgreSQL a schema of its own (`kp_…`,
created here and named in the URL's search_path, so any engine that connects by URL lands in
it) unless the URL already pins one. The harness hands the URL to the engine; what tables the
engine makes there is the engine's business.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import URL, create_engine, make_url, text
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from killpoint.contract.errors import KillpointError

BACKENDS = ("sqlite", "postgresql")


def parse(url: str) -> URL:
    """A database URL killpoint can give an engine; a clear `KillpointError` otherwise."""
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise KillpointError(f"not a database URL: {url!r}") from exc
    if parsed.get_backend_name() not in BACKENDS:
        raise KillpointError(
            f"unsupported database {parsed.get_backend_name()!r} in {url!r}: "
            "use sqlite:///PATH or postgresql+psycopg://USER@HOST/DB"
        )
    if parsed.get_backend_name() == "postgresql" and parsed.drivername == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def pins_schema(url: str) -> bool:
    """Whether a database URL names the schema itself (`options=-csearch_path=…`)."""
    return "search_path" in str(make_url(url).query.get("options", ""))


def is_postgres(url: str) -> bool:
    return parse(url).get_backend_name() == "postgresql"


def label(url: str) -> str:
    """The URL as a summary may show it: no password, the schema named."""
    parsed = make_url(url)
    shown = parsed.difference_update_query(["options"]).render_as_string(hide_password=True)
    schema = schema_of(url)
    return f"{shown} (schema {schema})" if schema else shown


def with_schema(url: str, schema: str) -> str:
    parsed = parse(url).update_query_dict({"options": f"-csearch_path={schema}"})
    return parsed.render_as_string(hide_password=False)


def create_schema(url: str, schema: str) -> None:
    engine = create_engine(parse(url))
    try:
        with engine.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA IF NOT EXISTS "{schema}"'))
    except SQLAlchemyError as exc:
        raise KillpointError(f"cannot open {label(url)}: {str(exc).splitlines()[0]}") from exc
    finally:
        engine.dispose()


def drop_schemas(url: str, schemas: list[str]) -> None:
    engine = create_engine(parse(url))
    try:
        with engine.begin() as conn:
            for schema in schemas:
                conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    finally:
        engine.dispose()


def schema_of(url: str) -> str:
    """The schema a database URL pins (`options=-csearch_path=…`); "" when it pins none."""
    return str(make_url(url).query.get("options", "")).partition("search_path=")[2]


def drop_scratch(asked: str | None, made: str) -> None:
    """Drop the schema `world_database(asked, …)` made (`made`), if it made one: nothing for
    SQLite or for a URL that pinned its own schema (that one is the user's)."""
    if asked is None or not is_postgres(asked) or pins_schema(asked):
        return
    schema = schema_of(made)
    if schema.startswith("kp_"):
        drop_schemas(asked, [schema])


@contextmanager
def dropped(asked: str | None, made: str) -> Iterator[None]:
    """`drop_scratch(asked, made)` on the way out, whatever happens inside."""
    try:
        yield
    finally:
        drop_scratch(asked, made)


def world_database(url: str | None, root: Path) -> str:
    """The URL of a database for one world under `root`: a SQLite file there by default, the
    given SQLite URL as it is, or a fresh PostgreSQL schema (unless the URL pins one)."""
    if url is None:
        return f"sqlite:///{root / 'store.sqlite'}"
    parsed = parse(url)
    rendered = parsed.render_as_string(hide_password=False)
    if parsed.get_backend_name() == "postgresql" and not pins_schema(rendered):
        schema = f"kp_{uuid.uuid4().hex[:12]}"
        create_schema(rendered, schema)
        return with_schema(rendered, schema)
    return rendered
