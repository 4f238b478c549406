"""An unset checkpoint key is mentioned only where it matters, and says what it means.

A campaign's stores are scratch: sealed and read by one process and the workers it forks, so a
random key for that process is all they need, and nothing is said. A store read by `inspect`
was sealed by another process, and one the demo leaves is read later by `inspect`: there an
unset key means checkpoints shown as rejected, and the note says so.
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from killpoint.harness.cli import app
from killpoint.harness.schedule import FaultSchedule, save_schedule

KEY = "KILLPOINT_CHECKPOINT_KEY"
UNSET = CliRunner(env={KEY: None, "KILLPOINT_DATABASE_URL": None})


def test_a_scratch_campaign_without_a_key_says_nothing_of_it(tmp_path: Path) -> None:
    result = UNSET.invoke(app, ["run", "-s", "email", "--no-double", "--no-interleave",
                                "--no-network", "--no-named", "--explore", "0", "--quiet",
                                "--workdir", str(tmp_path)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert KEY not in result.stderr
    assert result.stderr == ""


def test_a_replay_without_a_key_says_nothing_of_it(tmp_path: Path) -> None:
    schedule = save_schedule(
        FaultSchedule(scenario="email", run_id="clean", engine="reference"), tmp_path / "s.json"
    )
    result = UNSET.invoke(app, ["replay", str(schedule), "--workdir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert KEY not in result.stderr


def test_the_demo_without_a_key_says_a_later_inspect_will_reject_its_checkpoints(
    tmp_path: Path,
) -> None:
    result = UNSET.invoke(app, ["demo", "--db", f"sqlite:///{tmp_path / 'demo.sqlite'}"])
    assert result.exit_code == 0, result.output
    [note] = [line for line in result.stderr.splitlines() if KEY in line]
    assert "random key for this process only" in note
    assert "a later `killpoint inspect` shows them as REJECTED" in note
    assert "openssl rand -hex 32" in note
