"""The checkpoint key, held behind its reference (`$KILLPOINT_CHECKPOINT_KEY`), never reaches a
stored row, an artifact, a report, JUnit, the result JSON or the console: every byte a
campaign leaves is scanned for the key in every form the oracle's own scan knows (raw, hex,
base64 at each alignment: `killpoint.harness.canaries`). On PostgreSQL, where the bytes live in
the server, every row of every table of the campaign's schema is read as the oracle reads it
(`canary_scan.table_rows`), before each run's reset empties the tables and at the end; and the
campaign's own verdicts (`secrets_kept`, which scans each run) are never false."""

from __future__ import annotations

import base64
import json
import os
import secrets
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.canaries import Needles
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.protocol import StoreHandle
from killpoint.harness.run.canary_scan import table_rows
from killpoint.harness.run.databases import drop_schemas, schema_of, world_database
from killpoint.scenarios import CATALOGUE

SECRET = "planted-" + secrets.token_hex(24)
THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
KILLPOINT = str(Path(sys.executable).with_name("killpoint"))


NEEDLES = Needles([("checkpoint_key", SECRET)])


def _leaks(root: Path, *texts: str) -> list[str]:
    """Where any form of the secret appears: a file under `root` (SQLite files, WAL and
    free pages included, byte for byte) or one of `texts`."""
    found = [
        str(path.relative_to(root))
        for path in root.rglob("*")
        if path.is_file() and NEEDLES.find(path.read_bytes(), str(path))
    ]
    found += [f"output {i}" for i, t in enumerate(texts) if NEEDLES.find(t.encode(), "output")]
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
    runs = json.loads((out / "result.json").read_text())["runs"]
    kept = [v["valid"] for r in runs for v in r["verdicts"] if v["checker"] == "secrets_kept"]
    assert len(kept) == len(runs) and all(valid is True for valid in kept)


def _row_leaks(url: str) -> list[str]:
    """The tables of the URL's schema whose rows hold any form of the secret."""
    engine = create_engine(url, poolclass=NullPool)
    try:
        tables = table_rows(engine)
    finally:
        engine.dispose()
    return [table for table, values in tables if NEEDLES.find(b"\0".join(values), table)]


@pytest.mark.postgres
def test_the_row_scan_finds_a_planted_leak(postgres_url: str, tmp_path: Path) -> None:
    url = world_database(postgres_url, tmp_path)
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE quiet (note text, body bytea)"))
            conn.execute(text("CREATE TABLE noted (note text)"))
            conn.execute(text("CREATE TABLE held (body bytea)"))
            conn.execute(text("CREATE TABLE wrapped (note text, body bytea)"))
            conn.execute(text("INSERT INTO quiet VALUES ('nothing', '\\x00')"))
            b64 = base64.b64encode(SECRET.encode()).decode()
            conn.execute(text("INSERT INTO noted VALUES (:v)"), {"v": f"key={b64};"})
            conn.execute(text("INSERT INTO held VALUES (:v)"), {"v": b"\x00" + SECRET.encode()})
            wrapped = b"\x01" + base64.b64encode(SECRET.encode())  # base64 text in bytes
            conn.execute(text("INSERT INTO wrapped VALUES ('', :v)"), {"v": wrapped})
        assert sorted(_row_leaks(url)) == ["held", "noted", "wrapped"]
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
    kept = [v for r in result.runs for v in r.verdicts if v.checker == "secrets_kept"]
    assert len(kept) == len(result.runs) and all(v.valid is True for v in kept)
    assert {"single", "network", "named"} <= {r.kind for r in result.runs}  # it all ran
    assert "quarantined" in {r.final_status for r in result.runs}
    assert scanned == []
