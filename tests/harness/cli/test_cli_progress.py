"""Progress on stderr: rich's bar on a terminal, a line now and then in a CI log, none quiet.

The lines are pinned on a fake clock; the two modes end to end on a real campaign, its stderr
a pipe and a pseudo-terminal.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from killpoint.harness.cli import app
from killpoint.harness.cli._progress import PERIOD, Lines
from killpoint.harness.results import RunResult
from tests.support.campaigns import sample_campaign
from tests.support.fixtures import TEST_KEY

SMALL = ["run", "-s", "email", "--no-double", "--no-interleave", "--no-network", "--explore", "3"]
LINE = re.compile(r"killpoint: (\d+)/(\d+) runs \((\d+)%\), (\d+) violating, \d+:\d\d spent")


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _runs() -> tuple[RunResult, RunResult]:
    runs = sample_campaign().runs
    return next(r for r in runs if r.valid is True), next(r for r in runs if r.valid is False)


def _lines(clock: FakeClock) -> tuple[Lines, list[str]]:
    written: list[str] = []
    return Lines(written.append, clock), written


def _planned(total: int, runs: list[RunResult], seconds_each: float) -> list[str]:
    """The lines written for a campaign of `total` runs that made `runs`, one every so often."""
    clock = FakeClock()
    lines, written = _lines(clock)
    lines.planned(total)
    for run in runs:
        clock.now += seconds_each
        lines.ran(run)
    return written


def test_off_a_terminal_a_line_comes_each_tenth_of_the_runs() -> None:
    ok, bad = _runs()
    written = _planned(200, [bad if k == 7 else ok for k in range(200)], 0.01)
    assert len(written) == 10
    assert written[0] == "killpoint: 20/200 runs (10%), 1 violating, 0:00 spent, about 0:02 left"
    assert written[-1] == "killpoint: 200/200 runs (100%), 1 violating, 0:02 spent"


def test_off_a_terminal_a_slow_campaign_writes_a_line_every_period() -> None:
    written = _planned(1000, [_runs()[0]] * 5, PERIOD / 2)
    assert written == [
        "killpoint: 2/1000 runs (0%), 0 violating, 0:10 spent, about 83:10 left",
        "killpoint: 4/1000 runs (0%), 0 violating, 0:20 spent, about 83:00 left",
    ]


def test_before_the_total_is_known_a_line_counts_the_runs_alone() -> None:
    clock = FakeClock()
    lines, written = _lines(clock)
    clock.now = PERIOD
    lines.ran(_runs()[0])
    assert written == ["killpoint: 1 runs, 0 violating, 0:10 spent"]


def test_a_total_guessed_low_never_shows_more_done_than_planned() -> None:
    clock = FakeClock()
    lines, written = _lines(clock)
    lines.planned(1)
    lines.ran(_runs()[0])
    lines.ran(_runs()[0])
    assert written == ["killpoint: 1/1 runs (100%), 0 violating, 0:00 spent"]  # then 2/2: no step
    clock.now = PERIOD
    lines.ran(_runs()[0])
    assert written[-1] == "killpoint: 3/3 runs (100%), 0 violating, 0:10 spent"


def test_the_hunts_are_a_phase_of_their_own_counting_the_mutants_caught() -> None:
    clock = FakeClock()
    lines, written = _lines(clock)
    lines.planned(1)
    lines.ran(_runs()[0])
    clock.now = 30.0
    lines.hunting(4)
    for caught in (True, False, True, True):
        clock.now += 2.0
        lines.hunted(caught)
    assert written[1:] == [
        "killpoint: 1/4 mutants hunted (25%), 1 caught, 0:02 spent, about 0:06 left",
        "killpoint: 2/4 mutants hunted (50%), 1 caught, 0:04 spent, about 0:04 left",
        "killpoint: 3/4 mutants hunted (75%), 2 caught, 0:06 spent, about 0:02 left",
        "killpoint: 4/4 mutants hunted (100%), 3 caught, 0:08 spent",
    ]


def test_quiet_shows_no_progress(tmp_path: Path) -> None:
    runner = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY, "KILLPOINT_DATABASE_URL": None})
    result = runner.invoke(app, [*SMALL, "--quiet", "--workdir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert "runs in" in result.stdout


def test_the_mutants_command_shows_its_hunts_in_a_ci_log(tmp_path: Path) -> None:
    runner = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY})
    hunted = ["-m", "budgets_reset_on_restart", "-m", "approvals_not_revalidated"]
    scope = ["-s", "approval_refund", "--no-double", "--explore", "0"]
    result = runner.invoke(app, ["mutants", *hunted, *scope, "--workdir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "killpoint: 2/2 mutants hunted (100%), 2 caught" in result.stderr


def _killpoint(tmp_path: Path, stderr: int, *more: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "KILLPOINT_CHECKPOINT_KEY": TEST_KEY, "COLUMNS": "120"}
    env.pop("KILLPOINT_DATABASE_URL", None)
    command = [sys.executable, "-m", "killpoint", *SMALL, *more, "--workdir", str(tmp_path)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, env=env)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_in_a_ci_log_lines_count_the_runs_to_the_total_made(tmp_path: Path, jobs: str) -> None:
    """In one process or several (each shard makes every recording, the summary counts each
    once), the last line's count and total are the summary's."""
    done = _killpoint(tmp_path, subprocess.PIPE, "--jobs", jobs)
    out, err = done.communicate(timeout=120)
    assert done.returncode == 0, err
    made = int(re.findall(rb"(\d+) runs in ", out)[0])
    found = [LINE.match(line) for line in err.decode().splitlines()]
    assert found and all(found), err  # nothing on stderr but progress lines
    counts = [(int(m[1]), int(m[2]), int(m[3])) for m in found if m]
    assert 5 <= len(counts) <= 11
    assert counts[-1] == (made, made, 100)
    assert abs(counts[0][1] - made) <= 0.1 * made  # the first total was already close


def test_on_a_terminal_rich_draws_a_bar_with_the_total_violations_and_time_left(
    tmp_path: Path,
) -> None:
    leader, follower = pty.openpty()
    done = _killpoint(tmp_path, follower)
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        drawn += chunk
    out, _ = done.communicate(timeout=120)
    os.close(leader)
    assert done.returncode == 0
    made = int(re.findall(rb"(\d+) runs in ", out)[0])
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", drawn.decode(errors="replace"))
    bars = re.findall(r"runs [━╸╺ ]+ +(\d+)/(\d+) (\d+) violating \S+ spent \S+ left", text)
    assert bars, text[-2000:]
    assert all(int(total) >= int(n) for n, total, _ in bars)
    assert any(int(total) == made for _, total, _ in bars)


def test_a_total_guessed_low_still_ends_the_log_on_the_true_count() -> None:
    """The 100 % line comes when the guess is reached; the runs after it are counted when the
    phase ends (the hunts begin, or the campaign closes), so the log agrees with the summary."""
    clock = FakeClock()
    lines, written = _lines(clock)
    lines.planned(10)
    for _ in range(12):
        clock.now += 0.01
        lines.ran(_runs()[0])
    assert written[-1] == "killpoint: 10/10 runs (100%), 0 violating, 0:00 spent"
    lines.hunting(3)
    assert written[-1] == "killpoint: 12/12 runs (100%), 0 violating, 0:00 spent"
    lines.close()  # no runs since: nothing more to say
    assert len([w for w in written if "12/12" in w]) == 1
