"""The issue's failing report, made for real: `killpoint run` against the mutant that makes a
fresh idempotency key on resume, on `order_saga`: every violation grouped and named, its
verdict's reason first, under 100 KB; and the result keeps what the
page needs for the runs it doubts (a bounded number of histories) and each run's wall time."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from killpoint.harness.campaign.kept import MAX_DOUBTED_HISTORIES
from killpoint.harness.results import load_result
from killpoint.reports.queue import WAITING

MUTANT = "mutant:fresh_idempotency_key_on_resume"
MAX_BYTES = 100_000


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mutant-report")
    main = "from killpoint.harness.cli import main; main()"
    args = ["run", "--engine", MUTANT, "-s", "order_saga", "--report", "r.html", "--out", "r.json"]
    done = subprocess.run(
        [sys.executable, "-c", main, *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stderr[-2_000:]  # it violates
    return folder


def test_the_failing_report_is_under_100_kb(made: Path) -> None:
    assert len((made / "r.html").read_bytes()) < MAX_BYTES


def test_the_failing_report_names_its_reason_first_and_every_violation(made: Path) -> None:
    html = (made / "r.html").read_text()
    result = load_result(made / "r.json")
    reason = re.search(r'id="verdict-reason">([^<]*)<', html)
    assert reason is not None
    assert reason[1].startswith(f"{len(result.violations)} runs violate single_effect")
    assert html.index('id="verdict-reason"') < html.index('<section id="summary"')
    assert html.count('<article class="violation group"') < len(result.violations)
    for run in result.violations:  # each named, in its group's list or drawn in full
        assert f">{run.run_id}<" in html or f"run {run.run_id} " in html, run.run_id


def test_the_result_keeps_what_the_page_needs_for_the_runs_it_doubts(made: Path) -> None:
    result = load_result(made / "r.json")
    doubted = [r for r in result.runs if r.valid is True and r.final_status in WAITING]
    assert doubted and all(r.schedule_file for r in doubted)
    kept = [r for r in doubted if r.history is not None]
    assert len(kept) == min(len(doubted), MAX_DOUBTED_HISTORIES)
    assert all(r.history is None for r in result.runs if r.valid is True and r not in doubted)
    assert all(r.measures.wall_s is not None for r in result.runs)
    assert result.command is not None and result.command[1:3] == ["run", "--engine"]
    assert result.killpoint_version == version("killpoint")
    assert result.engine_version == f"killpoint {version('killpoint')}"  # a mutant is ours
    assert result.campaign_dir is not None and Path(result.campaign_dir).parent.name == (
        "killpoint-out"
    )
