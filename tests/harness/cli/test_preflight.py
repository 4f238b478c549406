"""A command that would fail at its end fails at its start, in one line, and creates nothing.

Found by trying as a user would: an unwritable `--report`, `--out`, `--junit` or SQLite
`--db` path used to give a traceback after the whole campaign had run, its results lost; a
failed invocation left an empty campaign folder behind; a schedule or result file that is not
UTF-8 gave a `UnicodeDecodeError` traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from killpoint.harness.cli import app

ENV = {"KILLPOINT_DATABASE_URL": None}


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner(env=ENV).invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stderr


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "plain.txt"
    path.write_text("not a folder")
    return path


@pytest.mark.parametrize("flag", ["--report", "--out", "--junit"])
def test_an_output_under_a_file_is_refused_before_any_run(
    flag: str, a_file: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    code, err = _invoke("run", "-s", "email", flag, str(a_file / "x"), "--workdir", str(work))
    assert code == 2
    assert err.strip() == f"killpoint: {flag} {a_file / 'x'}: {a_file} is a file, not a folder"
    assert not work.exists()  # nothing made: no campaign folder


def test_an_output_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    code, err = _invoke("run", "-s", "email", "--report", str(tmp_path), "--workdir", str(tmp_path))
    assert code == 2 and err.strip() == f"killpoint: --report {tmp_path}: is a folder"
    assert list(tmp_path.iterdir()) == []


def test_a_sqlite_database_under_a_file_is_refused(a_file: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{a_file}/store.sqlite"
    code, err = _invoke("run", "-s", "email", "--db", url, "--workdir", str(tmp_path / "w"))
    assert code == 2 and "is a file, not a folder" in err
    assert not (tmp_path / "w").exists()


def test_a_bad_database_url_leaves_no_campaign_folder(tmp_path: Path) -> None:
    code, err = _invoke("run", "-s", "email", "--db", "nope://x", "--workdir", str(tmp_path / "w"))
    assert code == 2 and "unsupported database 'nope'" in err
    assert not (tmp_path / "w").exists()


def test_an_output_in_a_new_folder_is_fine_and_the_check_leaves_no_trace(tmp_path: Path) -> None:
    from killpoint.harness.campaign import preflight

    preflight.outputs({"--report": tmp_path / "a" / "b" / "r.html"}, tmp_path / "work")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["replay", "merge"])
def test_a_file_that_is_not_utf8_is_a_user_error(command: str, tmp_path: Path) -> None:
    path = tmp_path / "binary.json"
    path.write_bytes(b"\xff\xfe{\x00")
    code, err = _invoke(command, str(path))
    assert code == 2
    kind = "fault schedule" if command == "replay" else "campaign result"
    assert err.strip() == f"killpoint: {path} is not a killpoint {kind}: not UTF-8 text"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("downtime_s", 1e308, "downtime_s: Input should be less than or equal to 31536000"),
        ("max_workers", 10_000, "max_workers: Input should be less than or equal to 100"),
        ("downtime_s", -1, "downtime_s: Input should be greater than or equal to 0"),
    ],
)
def test_a_schedule_field_out_of_range_is_refused_before_it_runs(
    field: str, value: float, message: str, tmp_path: Path
) -> None:
    """A downtime of 1e308 s used to be accepted, and made the reference engine 'violate'
    progress with a lease that expired at inf."""
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps({"scenario": "email", "run_id": "r", "engine": "reference", field: value})
    )
    code, err = _invoke("replay", str(path), "--workdir", str(tmp_path / "w"))
    assert (
        code == 2
        and err.strip() == f"killpoint: {path} is not a killpoint fault schedule: {message}"
    )
    assert not (tmp_path / "w").exists()
