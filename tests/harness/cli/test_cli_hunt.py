"""`killpoint hunt --engine`: a team's own engine hunted to the end of the plan, each class of
violation shown by its smallest schedule with a replay command; exit 1 on a violation, 0 when
the whole plan passes, 2 on a bad engine; `mutants --engine` points here."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from killpoint.harness.cli import app
from killpoint.harness.findings import schedule_size
from killpoint.harness.schedule import load_schedule
from tests.support.fixtures import TEST_KEY

# a small plan: no second crash, no two workers, no exploration
SMALL = ["--no-double", "--no-interleave", "--explore", "0"]


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY, "KILLPOINT_DATABASE_URL": None})


def _hunt(runner: CliRunner, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["hunt", "--workdir", str(tmp_path), *SMALL, *args])
    return result.exit_code, result.stdout, result.stderr


def test_a_violating_engine_fails_with_its_smallest_schedule_first_and_a_replay_that_replays_it(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = _hunt(
        runner, tmp_path, "--engine", "mutant:budgets_reset_on_restart", "-s", "approval_refund"
    )
    assert code == 1, out
    lines = out.splitlines()
    assert lines[0] == "FAIL budgets_reset_on_restart: violations found in the whole plan"
    replays = [line.partition("replay: ")[2] for line in lines if "replay: " in line]
    sizes = [schedule_size(load_schedule(shlex.split(r)[2])) for r in replays]
    assert len(sizes) > 1 and sizes[0] == min(sizes)  # the smallest counterexample comes first
    assert re.search(r"\d+ runs in [\d.]+s, [1-9]\d* violating, \d+ unknown", out)
    assert re.search(r"per phase: clean 1 \(1 violating\); single \d+", out)
    monkeypatch.chdir(tmp_path)
    replayed = runner.invoke(app, shlex.split(replays[0])[1:])  # exactly as printed
    assert replayed.exit_code == 1
    assert re.search(r"budget_preserved +VIOLATION", replayed.stdout)


def test_a_clean_engine_passes_the_whole_plan_and_lists_its_unknown_runs(
    runner: CliRunner, tmp_path: Path
) -> None:
    code, out, _ = _hunt(runner, tmp_path, "--engine", "reference", "-s", "email", "--json")
    assert code == 0, out
    hunted = json.loads(out)
    assert hunted["whole_plan"] is True and hunted["violating"] == 0
    assert hunted["violation_groups"] == []
    phases = {p["phase"]: p for p in hunted["phases"]}
    assert sum(p["runs"] for p in phases.values()) == hunted["runs"] > phases["single"]["runs"]
    # an unknown run is named with its schedule, never counted among the passes
    assert hunted["unknown"] == sum(g["runs"] for g in hunted["unknown_groups"]) > 0
    assert hunted["valid"] == "unknown"
    for group in hunted["unknown_groups"]:
        assert Path(group["smallest"]["schedule_file"]).is_file()
    code, out, _ = _hunt(runner, tmp_path / "text", "--engine", "reference", "-s", "email")
    assert code == 0 and out.startswith("PASS reference: no violation in the whole plan; ")
    assert "not passes" in out and "0 violating" in out


def test_two_mistakes_are_two_classes_each_with_its_smallest_schedule(
    runner: CliRunner, tmp_path: Path
) -> None:
    engine = "tests.support.two_bugs:factory"
    code, out, _ = _hunt(runner, tmp_path, "--engine", engine, "-s", "research_publish", "--json")
    assert code == 1
    groups = json.loads(out)["violation_groups"]
    assert {"single_effect", "verified_completion"} <= {g["checker"] for g in groups}
    sizes = [schedule_size(load_schedule(g["smallest"]["schedule_file"])) for g in groups]
    assert sizes == sorted(sizes)  # classes ordered by their smallest run


def test_first_stops_at_the_first_violation(runner: CliRunner, tmp_path: Path) -> None:
    engine = "tests.support.two_bugs:factory"
    args = ["--engine", engine, "-s", "research_publish", "--json"]
    code, out, _ = _hunt(runner, tmp_path, *args, "--first")
    assert code == 1
    first = json.loads(out)
    assert first["whole_plan"] is False and first["violating"] == 1
    [group] = first["violation_groups"]
    assert group["checker"] == "verified_completion" and group["smallest"]["phase"] == "clean"
    code, out, _ = _hunt(runner, tmp_path / "text", *args[:-1], "--first")
    assert code == 1
    assert out.startswith(f"FAIL {engine}: a violation found; --first stopped the hunt there")


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["hunt", "--engine", "no_such_engine"], "no engine named 'no_such_engine'"),
        (["hunt", "-s", "email"], "hunt needs the engine to hunt: --engine ENGINE"),
        (["mutants", "--engine", "mine:factory"], "`killpoint hunt --engine mine:factory`"),
    ],
)
def test_a_bad_or_missing_engine_is_one_line_and_exit_2(
    runner: CliRunner, tmp_path: Path, args: list[str], said: str
) -> None:
    result = runner.invoke(app, [*args, "--workdir", str(tmp_path)])
    assert result.exit_code == 2
    assert said in result.stderr and len(result.stderr.splitlines()) == 1
    assert not list(tmp_path.iterdir())  # refused before any work
