"""The checkpoint key, held behind its reference (`$KILLPOINT_CHECKPOINT_KEY`), never reaches a
stored row, an artifact, a report, JUnit, the result JSON or the console: every byte a
campaign leaves is scanned for the key, its hex and its base64. On PostgreSQL, where the bytes
live in the server, every row of every table of the campaign's schema is read, each column as
text and as its bytes, before each run's reset empties the tables and at the end."""

from __future__ import annotations

import base64
import os
import secrets
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from killpoint.harness.campaign import Campaign, CampaignConfig
from killpoint.harness.databases import drop_schemas, schema_of, world_database
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.protocol import StoreHandle
from killpoint.scenarios import CATALOGUE

SECRET = "planted-" + secrets.token_hex(24)
THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
KILLPOINT = str(Path(sys.executable).with_name("killpoint"))


def _encodings(value: str) -> list[bytes]:
    raw = value.encode()
    return [raw, raw.hex().encode(), base64.b64encode(raw), base64.urlsafe_b64encode(raw)]


def _leaks(root: Path, *texts: str) -> list[str]:
    """Where any encoding of the secret appears: a file under `root` (SQLite files, WAL and
    free pages included, byte for byte) or one of `texts`."""
    needles = _encodings(SECRET)
    found = [
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and any(n in path.read_bytes() for n in needles)
    ]
    found += [f"output {i}" for i, t in enumerate(texts) if any(n in t.encode() for n in needles)]
    return found


def test_the_scan_finds_a_planted_leak(tmp_path: Path) -> None:
    (tmp_path / "a.sqlite").write_bytes(b"\x00row\x00" + SECRET.encode().hex().encode())
    assert _leaks(tmp_path) == ["a.sqlite"]
    assert _leaks(tmp_path / "none", base64.b64encode(SECRET.encode()).decode()) == ["output 0"]


def test_a_campaign_leaves_its_checkpoint_key_nowhere(tmp_path: Path) -> None:
    out = tmp_path / "out"
    flags = ["--report", str(out / "r.html"), "--junit", str(out / "j.xml")]
    done = subprocess.run(
        [
            KILLPOINT,
            "run",
            "-s",
            "email",
            "-s",
            "order_saga",
            "--workdir",
            str(out),
            *flags,
            "--out",
            str(out / "result.json"),
        ],
        env={**os.environ, "KILLPOINT_CHECKPOINT_KEY": SECRET},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    stored = list(out.rglob("*.sqlite")) + list(out.rglob("artifacts/*"))
    assert stored and (out / "r.html").exists() and (out / "j.xml").exists()  # it all ran
    assert _leaks(out, done.stdout, done.stderr) == []


def _row_leaks(url: str) -> list[str]:
    """Where any encoding of the secret appears in the rows of the URL's schema: each table's
    rows as PostgreSQL prints them (text, bytea as hex) and each value as its own bytes."""
    needles = _encodings(SECRET)
    engine = create_engine(url, poolclass=NullPool)
    found: list[str] = []
    try:
        with engine.connect() as conn:
            tables = conn.execute(
                text("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
            ).scalars()
            for table in tables:
                rows = conn.execute(text(f'SELECT t::text, t.* FROM "{table}" t')).all()
                values = [_as_bytes(value) for row in rows for value in row]
                if any(n in value for n in needles for value in values):
                    found.append(table)
    finally:
        engine.dispose()
    return found


def _as_bytes(value: object) -> bytes:
    if isinstance(value, bytes | memoryview):
        return bytes(value)
    return str(value).encode()


@pytest.mark.postgres
def test_the_row_scan_finds_a_planted_leak(postgres_url: str, tmp_path: Path) -> None:
    url = world_database(postgres_url, tmp_path)
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE quiet (note text, body bytea)"))
            conn.execute(text("CREATE TABLE noted (note text)"))
            conn.execute(text("CREATE TABLE held (body bytea)"))
            conn.execute(text("INSERT INTO quiet VALUES ('nothing', '\\x00')"))
            b64 = base64.b64encode(SECRET.encode()).decode()
            conn.execute(text("INSERT INTO noted VALUES (:v)"), {"v": f"key={b64};"})
            conn.execute(text("INSERT INTO held VALUES (:v)"), {"v": b"\x00" + SECRET.encode()})
        assert sorted(_row_leaks(url)) == ["held", "noted"]
    finally:
        engine.dispose()
        drop_schemas(postgres_url, [schema_of(url)])


@pytest.mark.postgres
def test_a_campaign_on_postgres_stores_its_checkpoint_key_in_no_row(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KILLPOINT_CHECKPOINT_KEY", SECRET)
    scanned: list[str] = []

    def scan_then_reset(handle: StoreHandle) -> None:
        scanned.extend(_row_leaks(handle.url))
        assert REFERENCE.reset is not None
        REFERENCE.reset(handle)

    config = CampaignConfig(
        scenarios=[CATALOGUE["email"], CATALOGUE["order_saga"]],
        workdir=tmp_path,
        engine=replace(REFERENCE, reset=scan_then_reset),
        store_url=postgres_url,
        explore="0",
        # by default every third run of the single crashes, network faults and named cases (every
        # kind of row; a few seconds); the thorough profile adds the double crashes and pairs
        double=THOROUGH,
        interleave=THOROUGH,
        shard=None if THOROUGH else (1, 3),
    )
    with Campaign(config) as campaign:
        url = campaign.world.store.url
        try:
            result = campaign.run()
            scanned.extend(_row_leaks(url))
        finally:
            campaign.close()
            drop_schemas(postgres_url, [schema_of(url)])
    assert all(r.valid is not False for r in result.runs)
    assert {"single", "network", "named"} <= {r.kind for r in result.runs}  # it all ran
    assert "quarantined" in {r.final_status for r in result.runs}
    assert scanned == []
