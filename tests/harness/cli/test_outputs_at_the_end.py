"""A file that cannot be written after the campaign ran (a full disk): one line, a non-zero
exit, and the result JSON kept whole, written first and atomically."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from killpoint import reports
from killpoint.harness.cli import app
from tests.support.fixtures import TEST_KEY


def _disk_full(*_args: object) -> Path:
    raise OSError(errno.ENOSPC, "No space left on device")


def _run(tmp_path: Path, *flags: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        app,
        ["run", "-s", "email", "--workdir", str(tmp_path / "out"), *flags],
        env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY},
    )
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_a_report_that_cannot_be_written_keeps_the_result_and_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reports, "write_html", _disk_full)
    out = tmp_path / "result.json"
    code, output = _run(tmp_path, "--report", str(tmp_path / "r.html"), "--out", str(out))
    assert code == 2 and "Traceback" not in output
    assert "could not write report" in output and "No space left on device" in output
    assert json.loads(out.read_text())["runs"]  # whole, and every run in it
    assert str(out) in output


def test_without_out_the_result_is_kept_in_the_campaign_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reports, "write_html", _disk_full)
    code, output = _run(tmp_path, "--report", str(tmp_path / "r.html"))
    (kept,) = (tmp_path / "out").glob("campaign-*/result.json")
    assert code == 2 and "could not write report" in output and str(kept) in output
    assert json.loads(kept.read_text())["runs"]
    assert not (tmp_path / "r.html").exists()
