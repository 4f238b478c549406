"""Each of the later checkers alone catches a mutant: on a hand-written schedule the mutant's run
is judged false by that checker and true by every other, and with that checker removed from the
oracle the same schedule lets the mutant through. The reference passes each schedule."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.fake_services.faults import FaultMode, FaultPlan, FaultRule
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
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


# mutant -> (the checker that alone catches it, the scenario, the schedule's faults)
ALONE: dict[str, tuple[str, str, dict[str, object]]] = {
    # a 503 the client retries in place: the service sees two sends, the ledger spent one
    "retried_in_the_client": ("attempts_accounted", "order_saga", {"network": _failing_charge()}),
    # killed before the charge was sent: the resumed worker prices it again and charges that
    "intent_rederived_on_retry": (
        "intent_applied",
        "order_saga",
        {"crashes": _crash("charge", "effect.started")},
    ),
    # the same crash: a charge that can be looked up is left to a human instead
    "gives_up_on_doubt": (
        "expected_outcome",
        "order_saga",
        {"crashes": _crash("charge", "effect.started")},
    ),
    # killed after the charge's checkpoint: the next worker takes the lease over, token and all
    "takeover_keeps_token": ("fencing", "order_saga", {"crashes": _crash("ship", "step.begin")}),
    # killed after the refund reached the service: the resumed worker refunds again
    "compensation_repeated_on_resume": (
        "single_compensation",
        "order_saga_refund",
        {"crashes": _crash("refund", "transport.response_received")},
    ),
    # the receiver is down for two hours of a one-hour handoff, then reads the old time
    "clock_of_the_checkpoint": (
        "handoff_terms",
        "handoff",
        {"crashes": _crash("accept_contract", "step.begin"), "downtime_s": 7200.0},
    ),
    # two workers recover at once and the first's lease lapses while it waits: it dies with a
    # bare RuntimeError instead of stepping down, while the other completes the run safely
    "no_row_updated_is_an_error": (
        "engine_failure",
        "research_publish",
        {
            "crashes": _crash("publish", "effect.prepared"),
            "interleave": {"after_worker": 0, "switch_at": [0], "pause_expires_lease": True},
        },
    ),
    # the receiver accepted, then is down past the deadline, and publishes all the same
    "terms_checked_only_on_acceptance": (
        "handoff_terms",
        "handoff",
        {"crashes": _crash("publish", "step.begin"), "downtime_s": 7200.0},
    ),
}


def _run(engine: str, mutant: str, root: Path) -> RunResult:
    _, scenario_name, faults = ALONE[mutant]
    scenario = CATALOGUE[scenario_name]
    spec = REFERENCE if engine == "reference" else MUTANTS[engine]
    schedule = FaultSchedule.model_validate(
        {"scenario": scenario_name, "run_id": "alone-" + mutant.replace("_", "-"), **faults}
    )
    config = CampaignConfig(scenarios=[scenario], workdir=root, engine=spec)
    with Campaign(config) as campaign:
        result, _ = campaign.execute(scenario, schedule, "single")
    return result


def test_each_of_these_checkers_and_mutants_is_registered() -> None:
    assert set(ALONE) <= set(MUTANTS)
    assert {checker for checker, _, _ in ALONE.values()} <= set(CHECKERS)


@pytest.mark.parametrize("mutant", sorted(ALONE))
def test_the_mutant_is_caught_by_this_checker_alone(
    mutant: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checker = ALONE[mutant][0]
    caught = _run(mutant, mutant, tmp_path / "all")
    verdicts = {v.checker: v.valid for v in caught.verdicts}
    assert verdicts.pop(checker) is False, caught.verdicts
    assert all(v is True for v in verdicts.values()), verdicts
    monkeypatch.delitem(CHECKERS, checker)
    escaped = _run(mutant, mutant, tmp_path / "without")
    assert escaped.valid is True, [v for v in escaped.verdicts if v.valid is not True]


@pytest.mark.parametrize("mutant", sorted(ALONE))
def test_the_reference_passes_the_schedule_that_catches_the_mutant(
    mutant: str, tmp_path: Path
) -> None:
    result = _run("reference", mutant, tmp_path)
    assert result.valid is True, [v for v in result.verdicts if v.valid is not True]
