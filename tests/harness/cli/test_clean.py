"""`killpoint clean` and the bound on campaign folders: old folders and scratch schemas go,
the newest folders and every schema killpoint did not make stay."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url, text
from typer.testing import CliRunner

from killpoint.harness.cli import app
from killpoint.harness.cli.clean import bound_campaigns
from killpoint.harness.run import databases
from tests.support.fixtures import server_url

PG_ENV = "KILLPOINT_TEST_POSTGRES_URL"


def _campaigns(workdir: Path, count: int) -> list[Path]:
    folders = []
    for i in range(count):
        folder = workdir / f"campaign-20260101-00000{i}-x"
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "store.sqlite").write_bytes(b"x" * 1000)
        os.utime(folder, (1_000_000 + i, 1_000_000 + i))
        folders.append(folder)
    return folders


def test_clean_keeps_the_newest_campaign_folders_and_reports_bytes_freed(tmp_path: Path) -> None:
    folders = _campaigns(tmp_path, 4)
    (tmp_path / "report.html").write_text("kept")
    result = CliRunner().invoke(app, ["clean", "--workdir", str(tmp_path), "--keep", "1"])
    assert result.exit_code == 0, result.output
    assert [f.exists() for f in folders] == [False, False, False, True]
    assert (tmp_path / "report.html").exists()
    assert "removed 3 item(s), 0.0 MB freed" in result.output
    assert result.output.count("(0.0 MB)") == 3


def test_clean_dry_run_removes_nothing(tmp_path: Path) -> None:
    folders = _campaigns(tmp_path, 3)
    result = CliRunner().invoke(
        app, ["clean", "--workdir", str(tmp_path), "--keep", "0", "--dry-run"]
    )
    assert result.exit_code == 0, result.output
    assert all(f.exists() for f in folders)
    assert "would remove 3 item(s)" in result.output


def test_a_run_leaves_at_most_keep_campaigns_folders(tmp_path: Path) -> None:
    folders = _campaigns(tmp_path, 4)
    bound_campaigns(tmp_path, 3)  # room for the new campaign: two old ones stay
    assert [f.exists() for f in folders] == [False, False, True, True]
    bound_campaigns(tmp_path, 0)  # 0 keeps them all
    assert [f.exists() for f in folders] == [False, False, True, True]


def test_clean_db_on_sqlite_is_one_line_error(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.sqlite'}"
    result = CliRunner().invoke(app, ["clean", "--workdir", str(tmp_path), "--db", url])
    assert result.exit_code == 2
    assert "only PostgreSQL has scratch schemas" in result.output


@pytest.fixture
def own_database() -> Iterator[str]:
    """A PostgreSQL database of this test alone: `clean` drops every kp_ schema of a server's
    database, and other sessions' campaigns may be running in the shared one."""
    url = server_url()
    name = f"clean_{uuid.uuid4().hex[:8]}"
    admin = create_engine(databases.parse(url), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield databases.parse(url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def _schemas(url: str) -> set[str]:
    engine = create_engine(make_url(url))
    with engine.connect() as conn:
        names = {r[0] for r in conn.execute(text("SELECT nspname FROM pg_namespace"))}
    engine.dispose()
    return names


def test_clean_drops_only_the_scratch_schemas_killpoint_made(
    own_database: str, tmp_path: Path
) -> None:
    made = databases.world_database(own_database, tmp_path)
    scratch = databases.schema_of(made)
    engine = create_engine(make_url(made))
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE t (x int)"))
        conn.execute(text("INSERT INTO t SELECT generate_series(1, 1000)"))
        for other in ("kp_mine", "kp_0123456789abX", "team"):
            conn.execute(text(f'CREATE SCHEMA "{other}"'))
    engine.dispose()
    dry = CliRunner().invoke(
        app, ["clean", "--workdir", str(tmp_path), "--db", own_database, "--dry-run"]
    )
    assert dry.exit_code == 0, dry.output
    assert f"would remove schema {scratch}" in dry.output
    assert scratch in _schemas(own_database)
    result = CliRunner().invoke(app, ["clean", "--workdir", str(tmp_path), "--db", own_database])
    assert result.exit_code == 0, result.output
    assert f"removed schema {scratch}" in result.output
    left = _schemas(own_database)
    assert scratch not in left
    assert {"kp_mine", "kp_0123456789abX", "team", "public"} <= left
    assert "removed 1 item(s)" in result.output and "0.0 MB freed" not in result.output
