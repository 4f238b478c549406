"""An exception from the engine under test that is none of killpoint's own types is the
engine's failure, in both tiers: a verdict with its traceback, a saved schedule and a replay
command that reproduces it; the harness itself carries on."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic import JsonValue
from typer.testing import CliRunner

from killpoint.contract.records import Outcome
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.cli import app
from killpoint.harness.protocol import EngineSpec, StoreHandle, WorkerEnv
from killpoint.harness.results import RunResult
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS
from tests.support.fixtures import TEST_KEY

TIERS = ["inprocess", "real"]


class Unreadable:
    """An engine that takes the start message and then cannot parse its own state."""

    def __init__(self, env: WorkerEnv, scenario: Scenario) -> None:
        self.env = env

    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        return True

    def resume(self, workflow_id: str) -> Outcome:
        int(self.env.owner)  # an owner it takes for a number: "worker-0" is not
        raise AssertionError("unreachable")

    def grant(self, workflow_id: str, gate: str, actor: str, ttl_s: float) -> None: ...


class Exiting(Unreadable):
    """An engine that gives up the way a script does: `sys.exit`."""

    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        sys.exit(3)


def failing_reader(handle: StoreHandle, scenario: Scenario) -> Any:
    raise KeyError("checkpoints")


# a team's engine, as `--engine tests.harness.campaign.test_engine_failure:UNREADABLE` names it
UNREADABLE = EngineSpec(
    name="unreadable",
    factory=Unreadable,
    reader=failing_reader,
    ref="tests.harness.campaign.test_engine_failure:UNREADABLE",
)


def _judged(engine: EngineSpec, scenario: str, run_id: str, tier: str, root: Path) -> RunResult:
    """One run of a named case (or a clean run) of `scenario`, judged by a campaign."""
    case = CATALOGUE[scenario].case(run_id)
    schedule = case.schedule if case else FaultSchedule(scenario=scenario, run_id=run_id)
    config = CampaignConfig(scenarios=[CATALOGUE[scenario]], workdir=root, engine=engine)
    config.tier = tier  # type: ignore[assignment]
    with Campaign(config) as campaign:
        result, _ = campaign.execute(
            CATALOGUE[scenario], schedule, "named", case.expect if case else None
        )
    return result


def _replay(schedule_file: str, root: Path) -> tuple[int, str]:
    runner = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY, "KILLPOINT_DATABASE_URL": None})
    result = runner.invoke(app, ["replay", schedule_file, "--workdir", str(root)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


@pytest.mark.parametrize("tier", TIERS)
def test_a_mutant_raising_on_a_corrupt_artifact_gets_a_verdict_a_schedule_and_a_replay(
    tier: str, tmp_path: Path, checkpoint_key: bytes
) -> None:
    mutant = MUTANTS["artifact_parsed_before_hash_check"]
    result = _judged(mutant, "research_publish", "case-artifact-hash-differs", tier, tmp_path)
    verdict = next(v for v in result.verdicts if v.checker == "engine_failure")
    assert result.valid is False and verdict.valid is False
    assert verdict.summary.startswith("worker 1 raised JSONDecodeError")
    assert any("json.loads" in line for line in verdict.evidence)  # the traceback's own line
    assert result.schedule_file is not None and Path(result.schedule_file).is_file()
    code, output = _replay(result.schedule_file, tmp_path / "replay")
    assert code == 1
    assert "engine_failure       VIOLATION worker 1 raised JSONDecodeError" in output


@pytest.mark.parametrize("tier", TIERS)
def test_a_foreign_engine_raising_in_its_worker_and_its_reader_is_judged_not_fatal(
    tier: str, tmp_path: Path, checkpoint_key: bytes
) -> None:
    result = _judged(UNREADABLE, "email", "clean", tier, tmp_path)
    verdict = next(v for v in result.verdicts if v.checker == "engine_failure")
    assert verdict.valid is False
    assert verdict.summary.startswith("worker 0 raised ValueError: invalid literal for int()")
    assert "history reader raised KeyError: 'checkpoints'" in verdict.evidence
    assert result.schedule_file is not None
    code, output = _replay(result.schedule_file, tmp_path / "replay")
    assert code == 1 and "engine_failure       VIOLATION worker 0 raised ValueError" in output


@pytest.mark.parametrize("tier", TIERS)
def test_an_engine_calling_sys_exit_is_judged_and_the_harness_lives_on(
    tier: str, tmp_path: Path, checkpoint_key: bytes
) -> None:
    exiting = EngineSpec(name="exiting", factory=Exiting)
    result = _judged(exiting, "email", "clean", tier, tmp_path)
    verdict = next(v for v in result.verdicts if v.checker == "engine_failure")
    assert verdict.valid is False and verdict.summary.startswith("worker 0 raised SystemExit: 3")
