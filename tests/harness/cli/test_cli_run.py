"""`killpoint run`, `replay` and `merge`: summaries, exit codes, replayable failures, errors."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from killpoint.harness.cli import app
from killpoint.harness.schedule import FaultSchedule, HitPoint, load_schedule, save_schedule
from tests.support.fixtures import TEST_KEY

BROKEN_ENGINE = '''
from killpoint.reference.ledger import EffectExecutor
from killpoint.reference.steps import Steps
from killpoint.contract.records import EffectStatus
from killpoint.harness.engines.reference import ReferenceEngine


class AssumeAbsent(EffectExecutor):
    """Never asks the service: an effect in doubt is assumed not to have happened."""

    def reconcile(self, intent, record):
        doubt = (EffectStatus.STARTED, EffectStatus.UNKNOWN)
        return self.mark(record, EffectStatus.PREPARED, expect=doubt, reason="assumed absent")


class AssumeAbsentSteps(Steps):
    executor = AssumeAbsent


class Broken(ReferenceEngine):
    steps_class = AssumeAbsentSteps


def factory(env, scenario):
    return Broken(env, scenario)
'''


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY, "KILLPOINT_DATABASE_URL": None})


def _run(runner: CliRunner, command: str, *more: str) -> tuple[int, str, str]:
    """`killpoint COMMAND MORE…`: the command's words as typed, then arguments to add."""
    result = runner.invoke(app, [*shlex.split(command), *more])
    return result.exit_code, result.stdout, result.stderr


def test_run_json_summary_names_scenarios_boundaries_and_metrics(
    runner: CliRunner, tmp_path: Path
) -> None:
    code, out, _ = _run(runner, "run -s email --no-double --json --workdir", str(tmp_path))
    assert code == 0
    summary = json.loads(out)
    assert summary["scenarios"] == ["email"]
    assert summary["runs"] > 10
    email = summary["per_scenario"]["email"]
    assert email["boundaries_crashed"]["count"] == email["boundaries_discovered"]["count"] > 5
    assert summary["violations"] == []
    assert "resume_success" in summary["metrics"]
    phases = {p["phase"]: p["runs"] for p in summary["phases"]}
    assert phases["clean"] == 1 and phases["single"] > 5
    assert sum(phases.values()) == summary["runs"]


def test_run_writes_report_and_junit(runner: CliRunner, tmp_path: Path) -> None:
    report, junit = tmp_path / "r.html", tmp_path / "j.xml"
    code, _, _ = _run(
        runner,
        "run -s email --no-double --no-network --workdir",
        str(tmp_path),
        "--report",
        str(report),
        "--junit",
        str(junit),
    )
    assert code == 0
    assert report.read_text().startswith("<!DOCTYPE html>")
    assert "<testsuite" in junit.read_text()


def printed_replays(out: str) -> list[list[str]]:
    """The arguments of every `killpoint replay …` command a console output prints."""
    commands = [line.partition("killpoint replay ")[2] for line in out.splitlines()]
    return [["replay", *shlex.split(c)] for c in commands if c]


def test_a_broken_engines_schedule_names_it_and_the_reference_engine_survives_it(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_engine.py").write_text(BROKEN_ENGINE)
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(
        runner,
        "run -s research_publish --no-double --no-network --no-named --json "
        "--engine broken_engine:factory --workdir out",
    )
    assert code == 1
    violations = json.loads(out)["violations"]
    assert violations and violations[0]["checker"] == "single_effect"
    schedule_file = violations[0]["schedule_file"]
    assert json.loads(Path(schedule_file).read_text())["engine"] == "broken_engine:factory"
    code, out, _ = _run(
        runner, "replay", schedule_file, "--engine", "reference", "--workdir", "out"
    )
    assert code == 0  # the reference engine survives the same schedule


def test_the_printed_replay_command_alone_reproduces_a_foreign_engines_violation(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The console's `replay: killpoint replay FILE`, run as printed: the schedule names the
    `module:factory` engine, so nothing else is needed to see the same checker object."""
    (tmp_path / "broken_engine.py").write_text(BROKEN_ENGINE)
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(
        runner,
        "run -s research_publish --no-double --no-network --no-named --no-interleave "
        "--engine broken_engine:factory --workdir out",
    )
    assert code == 1
    checkers = re.findall(r"✗ research_publish \[(\w+)\]", out)
    commands = printed_replays(out)
    assert checkers and len(commands) == len(checkers)
    code, replayed, _ = _run(runner, *commands[0])
    assert code == 1
    assert re.search(rf"{checkers[0]} +VIOLATION", replayed)


def test_replay_of_a_named_case_checks_its_expected_recovery(
    runner: CliRunner, tmp_path: Path
) -> None:
    from killpoint.scenarios.cases import BY_NAME

    path = save_schedule(BY_NAME["checkpoint_tampered"].schedule, tmp_path / "case.json")
    code, out, _ = _run(
        runner, "replay", str(path), "--engine", "reference", "--json", "--workdir", str(tmp_path)
    )
    assert code == 0
    verdicts = {v["checker"]: v["valid"] for v in json.loads(out)["verdicts"]}
    assert verdicts["expected_recovery"] is True and verdicts["authority"] is True


def test_merge_of_shards_reports_every_run_once(runner: CliRunner, tmp_path: Path) -> None:
    outs, walls = [], []
    for shard in ("1/2", "2/2"):
        result = tmp_path / f"shard{shard[0]}.json"
        code, out, _ = _run(runner, f"run -s email --no-double --json --shard {shard}",
                            "--out", str(result), "--workdir", str(tmp_path))  # fmt: skip
        assert code == 0
        outs.append(str(result))
        walls.append(json.loads(out)["wall_s"])
    code, out, _ = _run(runner, "merge", *outs, "--json")
    assert code == 0
    merged = json.loads(out)
    code, whole, _ = _run(runner, "run -s email --no-double --json --workdir", str(tmp_path))
    assert merged["runs"] == json.loads(whole)["runs"]
    assert merged["wall_s"] == max(walls)  # shards run side by side: the longest's time


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "-s", "nope"], "no scenario named 'nope'"),
        (["run", "--shard", "3/2"], "--shard 3/2"),
        (["run", "--engine", "no_such_module:factory"], "cannot import engine module"),
        (["run", "--engine", "justaname"], "module:factory"),
        (["run", "--tier", "cloud"], "cloud"),
        (["replay", "missing.json"], "cannot read schedule"),
        (["merge", "missing.json"], "cannot read"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    runner: CliRunner, tmp_path: Path, args: list[str], message: str
) -> None:
    more = () if args[0] == "merge" else ("--workdir", str(tmp_path))
    code, out, err = _run(runner, *args, *more)
    assert code == 2
    assert message in err
    assert "Traceback" not in err + out
    assert len(err.strip().splitlines()) == 1


def test_a_schedule_for_an_unknown_scenario_is_rejected_clearly(
    runner: CliRunner, tmp_path: Path
) -> None:
    path = save_schedule(
        FaultSchedule(
            scenario="ghost",
            run_id="x",
            crashes=(HitPoint(worker=0, step=None, boundary="lease.acquired"),),
        ),
        tmp_path / "g.json",
    )
    code, _, err = _run(runner, "replay", str(path), "--workdir", str(tmp_path))
    assert code == 2 and "no scenario named 'ghost'" in err


def test_an_engine_outside_the_project_is_run_by_module_factory_and_its_bugs_found(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The docs' own-engine example, copied out of the repository as a team would."""
    example = Path(__file__).parents[3] / "docs" / "examples" / "json_file_engine.py"
    (tmp_path / "team_engine.py").write_text(example.read_text())
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(
        runner,
        "run -s order_saga --no-double --no-named --json "
        "--engine team_engine:factory --workdir out",
    )
    assert code == 1
    summary = json.loads(out)
    # (a run's label names its crash first, then anything else it was told: a lie, say)
    found = {(v["checker"], v["label"].split(", ")[0]) for v in summary["violations"]}
    # killed after the carrier accepted the shipment and before the JSON file was written:
    assert ("single_effect", "w0 ship:transport.response_received") in found
    # and it never reads back what it did before declaring completion
    assert any(checker == "verified_completion" for checker, _ in found)


def test_a_campaign_against_a_mutant_reports_its_violation_with_timeline_and_replay(
    runner: CliRunner, tmp_path: Path
) -> None:
    report = tmp_path / "mutant.html"
    code, out, _ = _run(
        runner,
        "run -s approval_refund --no-double --no-network --json "
        "--engine mutant:budgets_reset_on_restart",
        "--report",
        str(report),
        "--workdir",
        str(tmp_path),
    )
    assert code == 1
    # the reset puts the time budget back too: more time left than the clock left
    checkers = {v["checker"] for v in json.loads(out)["violations"]}
    assert checkers == {"budget_preserved", "deadline_kept"}
    page = report.read_text()
    assert 'class="violation' in page and "timeline" in page
    assert "killpoint replay " in page


def test_run_with_mutants_reports_the_mutation_score(runner: CliRunner, tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    code, out, _ = _run(
        runner,
        "run -s approval_refund --no-double --no-interleave --no-network --explore 10 --mutants "
        "-m budgets_reset_on_restart -m approvals_not_revalidated -m seal_not_tenant "
        "--json --report",
        str(report),
        "--workdir",
        str(tmp_path),
    )
    summary = json.loads(out)
    caught = {m["mutant"]: m["caught"] for m in summary["mutants"]}
    hunting = sum(m["seconds_to_detection"] or 0 for m in summary["mutants"])
    # one wall time for the whole job: the campaign's, then the hunts'
    assert summary["wall_s"] >= summary["duration_s"] + hunting
    assert list(caught) == [
        "budgets_reset_on_restart",
        "approvals_not_revalidated",
        "seal_not_tenant",
    ]
    assert caught["budgets_reset_on_restart"] and caught["approvals_not_revalidated"]
    assert code == (0 if all(caught.values()) else 1)
    # each caught mutant's run is on the page, with its saved schedule and replay command
    page = report.read_text()
    files = [m["schedule_file"] for m in summary["mutants"] if m["caught"]]
    assert files and all(Path(f).is_file() for f in files)
    assert page.count('<details class="catch mutant-catch"') == len(files)
    for mutant in summary["mutants"]:
        if mutant["caught"]:
            assert f"--engine mutant:{mutant['mutant']}</code>" in page


def test_hunt_finds_the_smallest_violation_of_a_teams_own_engine(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_engine.py").write_text(BROKEN_ENGINE)
    monkeypatch.chdir(tmp_path)
    code, out, _ = _run(runner, "hunt -s research_publish --engine broken_engine:factory --json")
    assert code == 1
    hunted = json.loads(out)
    assert hunted["engine"] == "broken_engine:factory" and hunted["violating"] > 0
    # the smallest failing schedule in the plan: a named case, or the single crash that proves it
    first = hunted["violation_groups"][0]
    assert first["checker"] in ("expected_recovery", "single_effect")
    assert load_schedule(first["smallest"]["schedule_file"]).crashes


def test_replay_fails_when_a_crash_point_is_never_reached_unless_allowed(
    runner: CliRunner, tmp_path: Path
) -> None:
    path = save_schedule(
        FaultSchedule(
            scenario="email",
            run_id="ghost-hit",
            engine="reference",
            crashes=(HitPoint(worker=0, step="no_such_step", boundary="step.begin"),),
        ),
        tmp_path / "g.json",
    )
    code, _out, err = _run(runner, "replay", str(path), "--workdir", str(tmp_path))
    assert code == 2  # the run itself is fine, but it tested nothing: a stale schedule fails
    assert "crash point(s) never reached: w0 no_such_step:step.begin: the schedule" in err
    code, _out, err = _run(
        runner, "replay", str(path), "--workdir", str(tmp_path), "--allow-unreached"
    )
    assert code == 0 and "never reached: w0 no_such_step:step.begin" in err  # asked for


def test_run_in_two_processes_summarizes_the_same_campaign(
    runner: CliRunner, tmp_path: Path
) -> None:
    args = ["run", "-s", "email", "--no-double", "--no-interleave", "--explore", "10"]
    args += ["--json", "--mutants", "-m", "budgets_reset_on_restart", "-m", "takeover_keeps_token"]
    args += ["-m", "seal_not_tenant", "-m", "global_completed_flag"]  # two caught, two escape
    code, one, _ = _run(runner, *args, "--workdir", str(tmp_path / "one"))
    code2, two, _ = _run(runner, *args, "--jobs", "2", "--workdir", str(tmp_path / "two"))
    assert code == code2 == 1  # email alone cannot catch every mutant: some escape, in both
    first, second = json.loads(one), json.loads(two)
    assert any(m["caught"] for m in first["mutants"]) and first["violations"] == []
    for key in ("runs", "per_scenario", "violations"):
        assert second[key] == first[key], key

    def hunted(summary: dict[str, list[dict[str, object]]]) -> list[dict[str, object]]:
        return [  # a hunt's seconds may differ, and its schedule is saved in its own workdir
            {
                k: Path(str(v)).name if k == "schedule_file" else v
                for k, v in m.items()
                if k != "seconds_to_detection"
            }
            for m in summary["mutants"]
        ]

    assert hunted(second) == hunted(first)


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        ("-m budgets_reset_on_restart", "--mutant picks the mutants that --mutants hunts"),
        ("--mutants -m no_such_mutant", "no mutant named 'no_such_mutant'; known: "),
    ],
)
def test_a_mutant_picked_without_mutants_or_unknown_is_a_user_error_before_any_work(
    runner: CliRunner, tmp_path: Path, flags: str, said: str
) -> None:
    code, _, err = _run(runner, f"run -s email {flags} --workdir", str(tmp_path / "work"))
    assert code == 2 and said in err and "Traceback" not in err
    assert not (tmp_path / "work").exists()


def test_a_wrong_jobs_value_or_jobs_with_a_shard_is_a_user_error(
    runner: CliRunner, tmp_path: Path
) -> None:
    code, _, err = _run(runner, "run -s email --jobs many --workdir", str(tmp_path))
    assert code == 2 and "--jobs wants a number or 'auto'" in err and "Traceback" not in err
    code, _, err = _run(runner, "run --jobs 2 --shard 1/2 --workdir", str(tmp_path))
    assert code == 2 and "leave out --jobs" in err
