"""`killpoint mutants`: the table, the JSON list, saved schedules, and the exit status."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from killpoint.harness.cli import app
from killpoint.harness.schedule import load_schedule
from tests.support.carried import save_carried
from tests.support.fixtures import TEST_KEY

ENV = {"KILLPOINT_CHECKPOINT_KEY": TEST_KEY}
KEYS = {"mutant", "caught", "checker", "runs_to_detection", "schedule"}


def _mutants(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner(env=ENV).invoke(app, ["mutants", "--workdir", str(tmp_path), *args])
    return result.exit_code, result.stdout


def test_json_lists_each_mutant_with_its_checker_and_schedule(tmp_path: Path) -> None:
    code, out = _mutants(
        tmp_path,
        "--json",
        "--mutant", "completion_without_verification",
        "--mutant", "compensation_as_rollback",
        "--scenario", "research_publish",
        "--scenario", "order_saga_refund",
    )  # fmt: skip
    assert code == 0, out
    rows = json.loads(out)
    assert [r["mutant"] for r in rows] == [
        "completion_without_verification",
        "compensation_as_rollback",
    ]
    for row in rows:
        assert set(row) >= KEYS
        assert row["caught"] is True
        assert isinstance(row["runs_to_detection"], int)
        assert row["schedule"]["scenario"] in ("research_publish", "order_saga_refund")
        saved = load_schedule(row["schedule_file"])  # replayable with `killpoint replay`
        assert saved.model_dump(mode="json") == row["schedule"]
    assert [r["checker"] for r in rows] == ["verified_completion", "single_effect"]


def test_table_names_the_checker_and_a_replay_command_that_works_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = _mutants(
        tmp_path, "--mutant", "budgets_reset_on_restart", "--scenario", "approval_refund"
    )
    assert code == 0, out
    assert "budgets_reset_on_restart" in out and "budget_preserved" in out
    assert "1/1 mutants caught" in out
    [command] = [line for line in out.splitlines() if line.startswith("replay ")]
    name, _, replay = command.partition(": killpoint ")
    assert name == "replay budgets_reset_on_restart" and "approval_refund-clean.json" in replay
    monkeypatch.chdir(tmp_path)
    replayed = CliRunner(env=ENV).invoke(app, shlex.split(replay))  # exactly as printed: the
    # schedule names the mutant (`mutant:NAME`), so nothing else is needed
    assert replayed.exit_code == 1
    assert re.search(r"budget_preserved +VIOLATION", replayed.stdout)


def test_an_escaped_mutant_fails_the_command(tmp_path: Path) -> None:
    """Over a scenario with no approval gate the approval mutant has nothing to get wrong."""
    code, out = _mutants(
        tmp_path,
        "--json",
        "--mutant", "approvals_not_revalidated",
        "--scenario", "research_publish_thin_draft",
    )  # fmt: skip
    assert code == 1
    [row] = json.loads(out)
    assert row["caught"] is False and row["checker"] is None and row["schedule"] is None


def test_an_unknown_mutant_is_a_user_error(tmp_path: Path) -> None:
    result = CliRunner(env=ENV).invoke(
        app, ["mutants", "--mutant", "nope", "--workdir", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "no mutant named 'nope'" in result.stderr


def test_hunts_in_two_processes_report_what_one_process_reports(tmp_path: Path) -> None:
    args = ["--json", "--scenario", "research_publish", "--scenario", "order_saga_refund",
            "--mutant", "completion_without_verification", "--mutant", "compensation_as_rollback",
            "--mutant", "budgets_reset_on_restart"]  # fmt: skip
    code, one = _mutants(tmp_path / "one", *args)
    code2, two = _mutants(tmp_path / "two", *args, "--jobs", "2")
    assert code == code2 == 0

    def strip(rows: list[dict[str, object]]) -> list[dict[str, object]]:
        # where the schedule was saved and how long the hunt took differ; nothing else may
        return [
            {k: v for k, v in r.items() if k not in ("schedule_file", "seconds_to_detection")}
            for r in rows
        ]

    assert strip(json.loads(two)) == strip(json.loads(one))


def test_the_report_shows_each_caught_mutant_with_a_replay_command_that_works_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page is the hunt's, green since every mutant was caught; the mutant's section holds
    the run that caught it and carries its schedule: saved from the page, the replay command,
    run as printed in the folder it was saved in, reproduces the violation."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner(env=ENV).invoke(
        app,
        ["mutants", "-m", "budgets_reset_on_restart", "-s", "approval_refund",
         "--report", "out/hunt.html"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    page = (tmp_path / "out" / "hunt.html").read_text()
    assert '<span class="badge pass">' in page and 'id="violations"' not in page
    catch = page[page.index('id="mutant-budgets_reset_on_restart"') :]
    assert "budget_preserved" in catch and 'class="timeline"' in catch
    [command] = save_carried(catch, tmp_path / "saved")
    assert command[-2:] == ["--engine", "mutant:budgets_reset_on_restart"]
    monkeypatch.chdir(tmp_path / "saved")  # "run the command in the folder you saved it in"
    replayed = CliRunner(env=ENV).invoke(app, command)
    assert replayed.exit_code == 1
    assert re.search(r"budget_preserved +VIOLATION", replayed.stdout)
