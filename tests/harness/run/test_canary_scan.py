"""The canary scan: every form a stored secret takes is found, in the store, the world's files
and the history, each run only in what it changed; and the world hands every worker the
secrets it scans for, the same way in both tiers."""

from __future__ import annotations

import base64
import json
import os
import secrets
import sqlite3
from pathlib import Path

import pytest

from killpoint.contract.secrets import CHECKPOINT_KEY_ENV, SERVICE_TOKEN_ENV, Secrets
from killpoint.harness.canaries import Needles, encodings
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.protocol import EngineSpec, EngineUnderTest, WorkerEnv
from killpoint.harness.run.canary_scan import Canaries, FileScan, world_secrets
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.sqlite_wal import read_new_frames
from killpoint.harness.run.world import World
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule
from killpoint.scenarios import CATALOGUE

SECRET = "canary-" + secrets.token_hex(24)


def _needles() -> Needles:
    return Needles([("checkpoint_key", SECRET)])


@pytest.mark.parametrize("pad", [b"", b"x", b"xy", b"xyz", b'{"k": "xyzw'])
def test_each_encoding_is_found_inside_a_longer_blob_at_any_alignment(pad: bytes) -> None:
    raw = SECRET.encode()
    forms = {
        "raw": raw,
        "hex": raw.hex().encode(),
        "HEX": raw.hex().upper().encode(),
        "base64": base64.b64encode(pad + raw + b"tail"),
        "base64url": base64.urlsafe_b64encode(pad + raw + b"\xff\xfe"),
    }
    for name, form in forms.items():
        found = _needles().find(b"\x00page\x00" + form + b"\x00", "here")
        assert [f.canary for f in found] == ["checkpoint_key"], name


def test_nothing_is_found_where_the_secret_is_not() -> None:
    other = ("canary-" + secrets.token_hex(24)).encode()
    blob = other + other.hex().encode() + base64.b64encode(other) + SECRET.encode()[:-1]
    assert _needles().find(blob, "here") == []
    assert all(len(data) >= 16 for _, data in encodings(SECRET))


def test_a_file_is_searched_again_only_where_it_changed(tmp_path: Path) -> None:
    scan = FileScan(_needles())
    wal = tmp_path / "store.sqlite-wal"
    wal.write_bytes(os.urandom(50_000) + SECRET.encode() + os.urandom(50_000))
    assert [f.where for f in scan.file(str(wal), "store file wal")] == ["store file wal"]
    assert scan.file(str(wal), "store file wal") == []  # not written since: not read again
    data = bytearray(wal.read_bytes())
    data[-10:] = b"0123456789"  # a later run writes past the leak: the leak is not its own
    wal.write_bytes(bytes(data))
    assert scan.file(str(wal), "store file wal") == []
    at = 70_000  # ... and one that writes it again, elsewhere
    wal.write_bytes(bytes(data[:at]) + SECRET.encode() + bytes(data[at + len(SECRET) :]))
    assert len(scan.file(str(wal), "store file wal")) == 1


def test_the_world_hands_each_worker_its_secrets_in_the_env_the_environment_and_the_client(
    tmp_path: Path,
) -> None:
    seen: list[tuple[Secrets, str, dict[str, str]]] = []

    def factory(env: WorkerEnv, scenario: Scenario) -> EngineUnderTest:
        assert env.secrets is not None
        token = env.http.headers["Authorization"]
        seen.append((env.secrets, token, {k: os.environ[k] for k in env.secrets.environ()}))
        return REFERENCE.factory(env, scenario)

    spy = EngineSpec(name="spy", factory=factory, reader=REFERENCE.reader, reset=REFERENCE.reset)
    with World.open(tmp_path) as world:
        history = run_schedule(
            world, CATALOGUE["email"], FaultSchedule(scenario="email", run_id="s"), spy
        )
        handed = world.canaries.secrets
    assert seen and all(s is handed for s, _, _ in seen)
    assert seen[0][1] == f"Bearer {handed.service_token}"
    assert seen[0][2] == {
        CHECKPOINT_KEY_ENV: handed.checkpoint_key,
        SERVICE_TOKEN_ENV: handed.service_token,
    }
    assert history.canaries is not None and history.canaries.findings == []
    assert handed.service_token not in repr(handed)  # never shown


def test_a_key_the_user_set_is_the_world_s_and_the_token_is_new_for_each_world(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(CHECKPOINT_KEY_ENV, SECRET)
    first, second = world_secrets(), world_secrets()
    assert first.checkpoint_key == second.checkpoint_key == SECRET
    assert first.service_token != second.service_token
    assert os.environ[SERVICE_TOKEN_ENV] == second.service_token


def test_a_leak_is_found_in_the_store_the_world_s_files_and_the_history(tmp_path: Path) -> None:
    """What an engine left is scanned wherever it lies; each finding names the place."""
    with World.open(tmp_path) as world:
        history = run_schedule(
            world, CATALOGUE["email"], FaultSchedule(scenario="email", run_id="s"), REFERENCE
        )
        key = world.canaries.secrets.checkpoint_key
        (tmp_path / "artifacts").mkdir(exist_ok=True)
        (tmp_path / "artifacts" / "note.json").write_text(json.dumps({"k": key}))
        leaked = history.model_copy(update={"final_reason": f"sealed with {key.encode().hex()}"})
        scanned = world.canaries.scanned(world.store, world.workdir, leaked)
    assert scanned.canaries is not None
    assert [f.label() for f in scanned.canaries.findings] == [
        "checkpoint_key (hex) in history",
        "checkpoint_key (raw) in artifacts/note.json",
    ]


def test_scans_off_leave_the_history_unscanned(tmp_path: Path) -> None:
    canaries = Canaries(on=False)
    with World.open(tmp_path) as world:
        world.canaries = canaries
        history = run_schedule(
            world, CATALOGUE["email"], FaultSchedule(scenario="email", run_id="s"), REFERENCE
        )
    assert history.canaries is None


def _wal_db(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.execute("CREATE TABLE others (body TEXT)")
    return conn


def test_a_wal_is_read_from_where_the_last_scan_stopped_across_a_restart(tmp_path: Path) -> None:
    conn = _wal_db(tmp_path / "s.sqlite")
    wal = tmp_path / "s.sqlite-wal"
    first = read_new_frames(wal, None)
    assert first is not None
    conn.execute("INSERT INTO notes VALUES (?)", ("x" * 5000 + SECRET,))
    added = read_new_frames(wal, first[1])
    assert added is not None and SECRET.encode() in added[0]
    conn.execute("INSERT INTO notes VALUES ('later')")
    later = read_new_frames(wal, added[1])
    assert later is not None and SECRET.encode() not in later[0] and b"later" in later[0]
    assert len(later[0]) < wal.stat().st_size // 2  # the rest of the log is not read again
    conn.execute("PRAGMA wal_checkpoint(RESTART)")
    conn.execute("INSERT INTO notes VALUES ('after a restart')")  # from the first frame again
    restarted = read_new_frames(wal, later[1])
    assert restarted is not None and b"after a restart" in restarted[0]
    assert restarted[1].salts != later[1].salts
    conn.close()
    (tmp_path / "not-a-wal").write_bytes(b"\0" * 64)
    assert read_new_frames(tmp_path / "not-a-wal", None) is None


def test_a_secret_written_to_a_wal_is_found_by_the_run_that_wrote_it(tmp_path: Path) -> None:
    """... and by a later run only if it writes the page that holds it again (its bytes are
    then in what that run wrote too)."""
    scan = FileScan(_needles())
    conn = _wal_db(tmp_path / "s.sqlite")
    wal = tmp_path / "s.sqlite-wal"
    assert scan.file(str(wal), "wal") == []
    conn.execute("INSERT INTO notes VALUES (?)", (SECRET,))
    assert [f.label() for f in scan.file(str(wal), "wal")] == ["checkpoint_key (raw) in wal"]
    conn.execute("INSERT INTO others VALUES ('a later run')")  # a page of its own
    assert scan.file(str(wal), "wal") == []
    conn.execute("INSERT INTO others VALUES (?)", (SECRET.encode().hex(),))
    assert [f.encoding for f in scan.file(str(wal), "wal")] == ["hex"]
    conn.execute("INSERT INTO notes VALUES ('the page again')")
    assert [f.encoding for f in scan.file(str(wal), "wal")] == ["raw"]
    conn.close()
