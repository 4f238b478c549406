"""Time is judged on the world's clock: an engine that restarts its time budget on every resume
ships a day past its deadline after a downtime longer than the budget, and only
`deadline_kept` objects (every checker the harness had before passes it); the reference
stops for its budget on the same schedule. A migration that takes an old checkpoint's limits
for the budget left is caught only by a fixture whose budget was partly spent."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.checkers import CHECKERS
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import RunResult
from killpoint.harness.schedule import FaultSchedule, Tamper
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS
from killpoint.scenarios.time_cases import LONG_DOWNTIME_S, TIME_CASES

BY_NAME = {c.name: c for c in TIME_CASES}
LONG = BY_NAME["time_budget_passes_during_downtime"].schedule
RESTARTED = MUTANTS["time_budget_restarted_on_resume"]
TAKEN_AS_LEFT = MUTANTS["legacy_limits_taken_as_left"]


def _run(spec: EngineSpec, schedule: FaultSchedule, root: Path) -> tuple[RunResult, History]:
    scenario = CATALOGUE[schedule.scenario]
    config = CampaignConfig(scenarios=[scenario], workdir=root, engine=spec)
    with Campaign(config) as campaign:
        return campaign.execute(scenario, schedule, "single")


def _verdicts(result: RunResult) -> dict[str, object]:
    return {v.checker: v.valid for v in result.verdicts}


def test_a_time_budget_restarted_on_resume_ships_past_the_deadline_and_only_deadline_kept_sees_it(
    tmp_path: Path,
) -> None:
    assert LONG.downtime_s == LONG_DOWNTIME_S > CATALOGUE["order_saga"].limits.time_s
    caught, _ = _run(RESTARTED, LONG, tmp_path / "caught")
    assert caught.final_status == "completed"  # a day late
    late = next(v for v in caught.verdicts if v.checker == "deadline_kept")
    assert late.valid is False
    assert late.summary.startswith("publisher.publish was sent 86400s after the run's deadline")
    before = {name: valid for name, valid in _verdicts(caught).items() if name != "deadline_kept"}
    assert set(before) == set(CHECKERS) - {"deadline_kept"}
    assert all(v is True for v in before.values()), caught.verdicts  # the oracle before: true
    reference, _ = _run(REFERENCE, LONG, tmp_path / "reference")
    assert reference.final_status == "budget_exhausted"
    assert all(v.valid is True for v in reference.verdicts), reference.verdicts


def test_at_a_short_downtime_only_the_checkpoints_show_the_time_not_charged(
    tmp_path: Path,
) -> None:
    """Nothing is sent late after a minute down, but the next checkpoint counts the minute as
    never spent: the checkpoint half sees what the journal half cannot yet."""
    short = LONG.model_copy(update={"downtime_s": 60.0, "run_id": "short"})
    caught, _ = _run(RESTARTED, short, tmp_path / "caught")
    late = next(v for v in caught.verdicts if v.checker == "deadline_kept")
    assert late.valid is False
    assert late.summary.endswith("the clock left 86340s: time the run spent was not counted")
    reference, _ = _run(REFERENCE, short, tmp_path / "reference")
    assert _verdicts(reference)["deadline_kept"] is True


@pytest.mark.parametrize("kind", ["legacy_v1", "legacy_v2"])
def test_limits_taken_as_left_grow_the_budget_only_when_it_was_partly_spent(
    kind: str, tmp_path: Path
) -> None:
    """The v1 fixture carries limits and spend apart; a fixture of limits equal to what is
    left (what the old-schema cases had) gives the mistake nothing to show."""
    case = BY_NAME["schema_v1_partly_spent_fresh"].schedule
    schedule = case.model_copy(update={"tamper": (Tamper(after_worker=0, kind=kind),)})
    mutant, _ = _run(TAKEN_AS_LEFT, schedule, tmp_path / "mutant")
    reference, _ = _run(REFERENCE, schedule, tmp_path / "reference")
    assert all(v.valid is True for v in reference.verdicts), reference.verdicts
    if kind == "legacy_v2":
        assert mutant.valid is True, mutant.verdicts
        return
    grew = next(v for v in mutant.verdicts if v.checker == "budget_preserved")
    assert grew.valid is False
    assert grew.summary.startswith("steps_left went up from 196 to 200")
