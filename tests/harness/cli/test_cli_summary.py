"""The console summary of a campaign, as a CI log shows it (80 columns, not a terminal).

Data is printed as written, never read as markup; a path or a command is never broken across
lines, so it can be copied from the log; violations come smallest first, one class (checker,
fault) at a time, and a long list says how much it left out; the counts per phase and the whole
job's time follow the total; the mutant table is on the console too. Built from hand-made
results: no campaign is run.
"""

from __future__ import annotations

import json
import shlex

import pytest

from killpoint.harness.cli._summary import SHOWN_GROUPS, print_summary, replay_command
from killpoint.harness.results import CampaignResult, RunResult, Verdict
from tests.support.campaigns import sample_campaign

# a CI workspace: deep, and with brackets rich would take for a style
DEEP = "/builds/team/agent-service/ci-artifacts/[matrix-py3.12]/killpoint-out/campaign-20260501"


@pytest.fixture(autouse=True)
def ci_log(monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard output is a pipe of 80 columns, as under a CI runner."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def _violating(n: int, classes: int = 1) -> CampaignResult:
    """`n` copies of the sample's violating run, each of its own business key and schedule
    file, over `classes` checkers (a class each: the fault is the same)."""
    base = sample_campaign()
    [bad] = base.violations
    runs: list[RunResult] = []
    for k in range(n):
        summary = f"payments.create_charge [order-{k}] took effect 2 times"
        checker = "single_effect" if k % classes == 0 else f"checker_{k % classes}"
        verdict = Verdict(checker=checker, valid=False, summary=summary)
        runs.append(
            bad.model_copy(
                update={
                    "run_id": f"single-{k:02d}",
                    "verdicts": [verdict],
                    "schedule_file": f"{DEEP}/schedules/order_saga-single-{k:02d}.json",
                }
            )
        )
    return base.model_copy(update={"runs": [r for r in base.runs if r.valid] + runs})


def _smallest_last() -> CampaignResult:
    """Three violating runs of one class; the last by id is the smallest: one crash where the
    others have two."""
    result = _violating(3)

    def twice(run: RunResult) -> RunResult:
        crashes = 2 * run.schedule.crashes
        return run.model_copy(
            update={"schedule": run.schedule.model_copy(update={"crashes": crashes})}
        )

    runs = [r if r.valid or r.run_id == "single-02" else twice(r) for r in result.runs]
    return result.model_copy(update={"runs": runs})


def _printed(result: CampaignResult, capsys: pytest.CaptureFixture[str]) -> list[str]:
    print_summary(result, as_json=False, written=[f"result: {DEEP}/result.json"])
    return capsys.readouterr().out.splitlines()


def test_a_business_key_in_brackets_is_printed_as_written(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = _printed(_violating(1), capsys)
    assert (
        "✗ order_saga [single_effect] payments.create_charge [order-0] took effect 2 times" in lines
    )


def test_each_replay_command_is_one_line_that_runs_as_printed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = _printed(_violating(3, classes=3), capsys)
    commands = [line.partition("replay: ")[2] for line in lines if "replay: " in line]
    assert len(commands) == 3
    for k, command in enumerate(commands):
        assert shlex.split(command) == [
            "killpoint",
            "replay",
            f"{DEEP}/schedules/order_saga-single-{k:02d}.json",
        ]


def test_paths_are_never_broken_across_lines(capsys: pytest.CaptureFixture[str]) -> None:
    result = _violating(1).model_copy(update={"backend": f"sqlite:///{DEEP}/world/store.sqlite"})
    lines = _printed(result, capsys)
    assert any(f"sqlite:///{DEEP}/world/store.sqlite" in line for line in lines)
    assert f"result: {DEEP}/result.json" in lines


def test_a_class_shows_its_smallest_run_and_counts_the_rest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = _printed(_smallest_last(), capsys)
    assert [line for line in lines if "replay: " in line] == [
        f"    replay: {replay_command(f'{DEEP}/schedules/order_saga-single-02.json')}"
    ]
    assert "    and 2 more of this class (single_effect after transport.response_received)" in lines
    assert "✗ 3 violating run(s) in 1 class(es) (checker, fault), smallest schedule first:" in lines


def test_a_long_list_of_classes_says_how_many_it_left_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    n = SHOWN_GROUPS + 5
    lines = _printed(_violating(n, classes=n), capsys)
    assert sum("replay: " in line for line in lines) == SHOWN_GROUPS
    assert any("… and 5 more classes (5 runs): the result file lists them all" in x for x in lines)


def test_a_list_that_fits_says_nothing_more(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _printed(_violating(SHOWN_GROUPS, classes=SHOWN_GROUPS), capsys)
    assert not any("more classes" in line or "more of this class" in line for line in lines)


def test_the_total_is_followed_by_the_counts_per_phase_and_the_whole_job_s_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = sample_campaign().model_copy(update={"wall_s": 40.25})
    lines = _printed(result, capsys)
    [total] = [line for line in lines if " runs in " in line]
    assert total.startswith(
        "8 runs in 40.2s for the whole job with the mutant hunts (campaign 12.5s), "
        "1 violating, 1 unknown; "
    )
    assert lines[lines.index(total) + 1] == (
        "per phase: clean 2; single 4 (1 violating); network 1; generated 1 (1 unknown)"
    )


def test_a_run_that_broke_two_invariants_is_listed_once_with_one_replay(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = _violating(1)
    [bad] = result.violations
    second = Verdict(checker="budget_preserved", valid=False, summary="3 attempts of 2")
    twice = bad.model_copy(update={"verdicts": [*bad.verdicts, second]})
    lines = _printed(result.model_copy(update={"runs": [twice]}), capsys)
    assert sum("[single_effect]" in line or "[budget_preserved]" in line for line in lines) == 2
    assert sum("replay: " in line for line in lines) == 1


def test_the_mutant_table_is_printed_with_each_mutants_checker_and_runs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = _printed(sample_campaign(), capsys)  # no_ledger, skip_verify caught; one escaped
    rows = {line.split()[1]: line for line in lines if line.startswith("│ ") and "_" in line}
    assert "single_effect" in rows["no_ledger"] and " 4 " in rows["no_ledger"]
    assert "verified_completion" in rows["skip_verify"]
    assert "ESCAPED" in rows["stale_approval"]


def test_the_json_summary_orders_groups_and_counts_phases_as_the_console_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    print_summary(_smallest_last().model_copy(update={"wall_s": 3.0}), as_json=True, written=[])
    summary = json.loads(capsys.readouterr().out)
    assert [v["run_id"] for v in summary["violations"]] == ["single-02", "single-00", "single-01"]
    [group] = summary["violation_groups"]
    assert (group["checker"], group["fault"], group["runs"], group["more"]) == (
        "single_effect",
        "transport.response_received",
        3,
        2,
    )
    assert group["smallest"]["run_id"] == "single-02" and group["smallest"]["phase"] == "single"
    assert group["smallest"]["summary"] == "payments.create_charge [order-2] took effect 2 times"
    assert {p["phase"]: p["violating"] for p in summary["phases"]} == {
        "clean": 0, "single": 3, "network": 0, "generated": 0,
    }  # fmt: skip
    assert summary["wall_s"] == 3.0 and summary["runs"] == sum(p["runs"] for p in summary["phases"])
