"""Each of the later checkers alone catches a mutant: on a hand-written schedule the mutant's run
is judged false by that checker and true by every other, and with that checker removed from the
oracle the same schedule lets the mutant through. The reference passes each schedule."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.fake_services.faults import FaultMode, FaultPlan, FaultRule
from killpoint.harness.campaign import Campaign, CampaignConfig
from killpoint.harness.checkers import CHECKERS
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.results import RunResult
from killpoint.harness.schedule import FaultSchedule, HitPoint
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS


def _crash(step: str, boundary: str) -> tuple[HitPoint, ...]:
    return (HitPoint(worker=0, step=step, boundary=boundary),)


def _failing_charge() -> FaultPlan:
    rule = FaultRule(
        service="payments",
        operation="create_charge",
        occurrence=1,
        mode=FaultMode.ERROR_BEFORE_COMMIT,
    )
    return FaultPlan.of(rule)


# checker -> (its mutant, the scenario, the schedule's faults)
ALONE: dict[str, tuple[str, str, dict[str, object]]] = {
    # a 503 the client retries in place: the service sees two sends, the ledger spent one
    "attempts_accounted": ("retried_in_the_client", "order_saga", {"network": _failing_charge()}),
    # killed before the charge was sent: the resumed worker prices it again and charges that
    "intent_applied": (
        "intent_rederived_on_retry",
        "order_saga",
        {"crashes": _crash("charge", "effect.started")},
    ),
    # the same crash: a charge that can be looked up is left to a human instead
    "expected_outcome": (
        "gives_up_on_doubt",
        "order_saga",
        {"crashes": _crash("charge", "effect.started")},
    ),
    # killed after the charge's checkpoint: the next worker takes the lease over, token and all
    "fencing": (
        "takeover_keeps_token",
        "order_saga",
        {"crashes": _crash("ship", "step.begin")},
    ),
    # killed after the refund reached the service: the resumed worker refunds again
    "single_compensation": (
        "compensation_repeated_on_resume",
        "order_saga_refund",
        {"crashes": _crash("refund", "transport.response_received")},
    ),
    # the receiver is down for two hours of a one-hour handoff, then reads the old time
    "handoff_terms": (
        "clock_of_the_checkpoint",
        "handoff",
        {"crashes": _crash("accept_contract", "step.begin"), "downtime_s": 7200.0},
    ),
}


def _run(engine: str, checker: str, root: Path) -> RunResult:
    _, scenario_name, faults = ALONE[checker]
    scenario = CATALOGUE[scenario_name]
    spec = REFERENCE if engine == "reference" else MUTANTS[engine]
    schedule = FaultSchedule.model_validate(
        {"scenario": scenario_name, "run_id": f"alone-{checker}", **faults}
    )
    config = CampaignConfig(scenarios=[scenario], workdir=root, engine=spec)
    with Campaign(config) as campaign:
        result, _ = campaign.execute(scenario, schedule, "single")
    return result


def test_each_of_these_checkers_and_mutants_is_registered() -> None:
    assert set(ALONE) <= set(CHECKERS)
    assert {mutant for mutant, _, _ in ALONE.values()} <= set(MUTANTS)


@pytest.mark.parametrize("checker", sorted(ALONE))
def test_the_mutant_is_caught_by_this_checker_alone(
    checker: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mutant = ALONE[checker][0]
    caught = _run(mutant, checker, tmp_path / "all")
    verdicts = {v.checker: v.valid for v in caught.verdicts}
    assert verdicts.pop(checker) is False, caught.verdicts
    assert all(v is True for v in verdicts.values()), verdicts
    monkeypatch.delitem(CHECKERS, checker)
    escaped = _run(mutant, checker, tmp_path / "without")
    assert escaped.valid is True, [v for v in escaped.verdicts if v.valid is not True]


@pytest.mark.parametrize("checker", sorted(ALONE))
def test_the_reference_passes_the_schedule_that_catches_the_mutant(
    checker: str, tmp_path: Path
) -> None:
    result = _run("reference", checker, tmp_path)
    assert result.valid is True, [v for v in result.verdicts if v.valid is not True]
