"""Lying start messages alone expose two mutants: on a hand-written schedule each mutant's run is
judged false with the lie and true without it (an honest redelivery, or none, shows nothing),
and the reference passes the same schedule; the approval's coverage is what catches the
protected call built from the lie (the grant was valid all along)."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.checkers.authority import beyond_approval, check_authority
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import RunResult
from killpoint.harness.schedule import FaultSchedule, HitPoint, Lie
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS

# mutant -> (scenario, where worker 0 dies, the lie told to the recovery, the checkers that object)
ALONE: dict[str, tuple[str, HitPoint, Lie, set[str]]] = {
    # the recovery is told the order again, its amount raised: the charge is sent for 8401
    "redelivered_start_replaces_input": (
        "order_saga",
        HitPoint(worker=0, step="validate_order", boundary="checkpoint.committed"),
        Lie(worker=1, kind="amount"),
        {"message_integrity"},
    ),
    # the recovery is told the refund again, raised from 120 to 240 EUR; the approval it gets
    # is for 120 EUR, and valid: the refund sent is not what was approved
    "protected_call_beyond_its_approval": (
        "approval_refund",
        HitPoint(worker=0, step="charge", boundary="effect.started"),
        Lie(worker=1, kind="amount"),
        {"authority", "message_integrity"},
    ),
}


def _run(spec: EngineSpec, scenario: str, schedule: FaultSchedule, root: Path) -> RunResult:
    with Campaign(CampaignConfig([CATALOGUE[scenario]], root, spec)) as campaign:
        result, history = campaign.execute(CATALOGUE[scenario], schedule, "single")
    return result.model_copy(update={"history": history})


def _schedules(mutant: str) -> tuple[FaultSchedule, FaultSchedule]:
    scenario, crash, lie, _ = ALONE[mutant]
    honest = FaultSchedule(scenario=scenario, run_id="lied", crashes=(crash,))
    return honest.model_copy(update={"lies": (lie,)}), honest


@pytest.mark.parametrize("mutant", sorted(ALONE))
def test_the_mutant_is_caught_with_the_lie_and_escapes_without_it(
    mutant: str, tmp_path: Path
) -> None:
    lied, honest = _schedules(mutant)
    scenario, _, _, objecting = ALONE[mutant]
    caught = _run(MUTANTS[mutant], scenario, lied, tmp_path / "lied")
    assert {v.checker for v in caught.verdicts if v.valid is False} == objecting
    without = _run(MUTANTS[mutant], scenario, honest, tmp_path / "honest")
    assert without.valid is True, [v for v in without.verdicts if v.valid is not True]
    redelivered = honest.model_copy(update={"redeliver_start": True})  # the same message again
    again = _run(MUTANTS[mutant], scenario, redelivered, tmp_path / "again")
    assert again.valid is True, [v for v in again.verdicts if v.valid is not True]


@pytest.mark.parametrize("mutant", sorted(ALONE))
def test_the_reference_passes_the_same_schedule(mutant: str, tmp_path: Path) -> None:
    lied, _ = _schedules(mutant)
    result = _run(REFERENCE, ALONE[mutant][0], lied, tmp_path)
    assert result.valid is True, [v for v in result.verdicts if v.valid is not True]
    assert result.history is not None and [x.kind for x in result.history.lies] == ["amount"]


def test_the_protected_call_is_caught_by_what_its_approval_covered_not_by_its_time(
    tmp_path: Path,
) -> None:
    """The grant was valid when the refund went out: only its coverage objects (240 EUR sent
    on an approval of 120 EUR); without the coverage the call would pass as authorized."""
    lied, _ = _schedules("protected_call_beyond_its_approval")
    result = _run(MUTANTS["protected_call_beyond_its_approval"], "approval_refund", lied, tmp_path)
    history = result.history
    assert isinstance(history, History)
    beyond, _ = beyond_approval(history)
    assert beyond is not None and "amount_cents=24001, approved 12000" in beyond.summary
    uncovered = [g.model_copy(update={"covered": None}) for g in history.grants]
    workflow = CATALOGUE["approval_refund"].workflow
    blind = check_authority(history.model_copy(update={"grants": uncovered}), workflow)
    assert blind.valid == "unknown"  # in time, and nothing to say what it approved
