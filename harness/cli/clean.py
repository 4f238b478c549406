"""`killpoint clean`: what campaigns leave behind — `campaign-*` folders, `kp_…` schemas — removed.

Each campaign gets a fresh folder under the workdir (about 70 MB for the main job) and, on
PostgreSQL, a fresh schema (`killpoint.harness.run.databases.world_database`); nothing else frees
them. `clean` keeps the newest N folders and drops the scratch schemas killpoint named itself
(`kp_` and twelve hex digits), never any other; `killpoint run` calls `bound_campaigns` so the
workdir holds at most `--keep-campaigns` folders without anyone running `clean`.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from sqlalchemy import create_engine, text
from sqlalchemy.exc import SQLAlchemyError

from killpoint.contract.errors import KillpointError
from killpoint.harness.cli._app import app
from killpoint.harness.cli._shared import WORKDIR, WorkdirOption
from killpoint.harness.run import databases

# Exactly the names `databases.world_database` gives: a schema of anyone else never matches.
SCRATCH_SCHEMA = re.compile(r"^kp_[0-9a-f]{12}$")
CAMPAIGN_GLOB = "campaign-*"
DEFAULT_KEEP = 5


@dataclass(frozen=True)
class Removed:
    """One thing `clean` removed (or, on a dry run, would remove) and the bytes it held."""

    what: str
    size: int


def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def old_campaigns(workdir: Path, keep: int) -> list[Path]:
    """The campaign folders past the newest `keep` (names begin with their start time)."""
    if not workdir.is_dir():
        return []
    folders = [p for p in workdir.glob(CAMPAIGN_GLOB) if p.is_dir() and not p.is_symlink()]
    folders.sort(key=lambda p: (p.stat().st_mtime, p.name), reverse=True)
    return folders[max(keep, 0) :]


def remove_campaigns(workdir: Path, keep: int, dry_run: bool = False) -> list[Removed]:
    removed = []
    for folder in old_campaigns(workdir, keep):
        removed.append(Removed(str(folder), folder_size(folder)))
        if not dry_run:
            shutil.rmtree(folder, ignore_errors=True)
    return removed


def bound_campaigns(workdir: Path, keep: int) -> None:
    """Before a new campaign: leave room for it within `keep` folders (0 keeps them all)."""
    if keep > 0:
        remove_campaigns(workdir, keep - 1)


_SCHEMA_SIZES = text(
    "SELECT n.nspname, COALESCE(SUM(pg_total_relation_size(c.oid)), 0) "
    "FROM pg_namespace n LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relkind = 'r' "
    "WHERE n.nspname LIKE 'kp\\_%' GROUP BY n.nspname ORDER BY n.nspname"
)


def scratch_schemas(url: str) -> list[Removed]:
    """The schemas on this server that killpoint made, with the bytes their tables hold."""
    engine = create_engine(databases.parse(url))
    try:
        with engine.connect() as conn:
            rows = conn.execute(_SCHEMA_SIZES).all()
    except SQLAlchemyError as exc:
        shown = databases.label(url)
        raise KillpointError(f"cannot open {shown}: {str(exc).splitlines()[0]}") from exc
    finally:
        engine.dispose()
    return [
        Removed(f"schema {name}", int(size)) for name, size in rows if SCRATCH_SCHEMA.match(name)
    ]


def remove_schemas(url: str, dry_run: bool = False) -> list[Removed]:
    if not databases.is_postgres(url):
        raise KillpointError(f"--db {databases.label(url)}: only PostgreSQL has scratch schemas")
    found = scratch_schemas(url)
    if found and not dry_run:
        databases.drop_schemas(url, [r.what.removeprefix("schema ") for r in found])
    return found


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


@app.command()
def clean(
    workdir: WorkdirOption = WORKDIR,
    keep: Annotated[
        int,
        typer.Option("--keep", metavar="N", min=0, help="Campaign folders to keep, newest first."),
    ] = DEFAULT_KEEP,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            metavar="URL",
            help="Also drop the scratch kp_… schemas killpoint made on this PostgreSQL.",
            show_default=False,
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would go; remove nothing.")
    ] = False,
) -> None:
    """Remove old campaign folders (keep the newest N) and killpoint's scratch schemas."""
    removed = remove_campaigns(workdir, keep, dry_run)
    if db is not None:
        removed += remove_schemas(db, dry_run)
    verb = "would remove" if dry_run else "removed"
    for item in removed:
        typer.echo(f"{verb} {item.what} ({_megabytes(item.size)})")
    freed = sum(r.size for r in removed)
    typer.echo(
        f"{verb} {len(removed)} item(s), {_megabytes(freed)} {'to free' if dry_run else 'freed'}"
    )
