"""Each deeper fault combination alone catches a mutant: on a hand-written schedule the mutant's
run is judged false, with any one of the combination's faults left out it passes, the plan
without exploration lets it through, and the reference passes the schedule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.hunt import hunt_outcome
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.options import CampaignOptions
from killpoint.harness.results import RunResult
from killpoint.harness.schedule import FaultSchedule
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS
from tests.support.fixtures import THOROUGH


def _crash(step: str, boundary: str) -> list[dict[str, Any]]:
    return [{"worker": 0, "step": step, "boundary": boundary}]


def _rule(service: str, operation: str, mode: str) -> dict[str, Any]:
    return {"rules": [{"service": service, "operation": operation, "occurrence": 1, "mode": mode}]}


# mutant -> (scenario, the combination's faults, the checker that objects)
ALONE: dict[str, tuple[str, dict[str, Any], str]] = {
    # killed right after a 503, before recording it: the resumed send spends no attempt
    "unrecorded_attempt_resent": (
        "order_saga",
        {
            "crashes": _crash("charge", "transport.response_received"),
            "network": _rule("payments", "create_charge", "error_before_commit"),
        },
        "attempts_accounted",
    ),
    # killed after the post was created; the recovery's lookup times out: posted again
    "lookup_timeout_taken_as_absent": (
        "research_publish",
        {
            "crashes": _crash("publish", "transport.response_received"),
            "network": _rule("cms", "posts_by_slug", "timeout_before_commit"),
        },
        "single_effect",
    ),
    # the verification read times out and counts as seen
    "failed_read_taken_as_verified": (
        "research_publish",
        {"network": _rule("cms", "get_post", "timeout_before_commit")},
        "verified_completion",
    ),
    # the queue delivers the start message again once the order is complete
    "finished_run_restarted_on_redelivery": (
        "order_saga",
        {"redeliver_after_end": True},
        "monotonic_sequence",
    ),
}


def _run(engine: str, scenario_name: str, faults: dict[str, Any], root: Path) -> RunResult:
    scenario = CATALOGUE[scenario_name]
    spec = REFERENCE if engine == "reference" else MUTANTS[engine]
    schedule = FaultSchedule.model_validate(
        {"scenario": scenario_name, "run_id": "alone", **faults}
    )
    with Campaign(CampaignConfig(scenarios=[scenario], workdir=root, engine=spec)) as campaign:
        result, _ = campaign.execute(scenario, schedule, "generated")
    return result


@pytest.mark.parametrize("mutant", sorted(ALONE))
def test_the_combination_alone_catches_the_mutant(mutant: str, tmp_path: Path) -> None:
    scenario, faults, checker = ALONE[mutant]
    caught = _run(mutant, scenario, faults, tmp_path / "all")
    assert {v.checker for v in caught.verdicts if v.valid is False} == {checker}
    for left_out in faults if len(faults) > 1 else ():
        fewer = {k: v for k, v in faults.items() if k != left_out}
        passed = _run(mutant, scenario, fewer, tmp_path / left_out)
        assert passed.valid is True, (left_out, passed.verdicts)


@pytest.mark.parametrize("mutant", sorted(ALONE))
def test_the_reference_passes_the_combination(mutant: str, tmp_path: Path) -> None:
    scenario, faults, _ = ALONE[mutant]
    result = _run("reference", scenario, faults, tmp_path)
    assert result.valid is True, [v for v in result.verdicts if v.valid is not True]


@pytest.mark.parametrize(
    "mutant",
    # each hunts its whole plan: one in `ci`, all under `thorough`
    sorted(ALONE) if THOROUGH else ["unrecorded_attempt_resent"],
)
def test_the_plan_alone_lets_the_mutant_through(mutant: str, tmp_path: Path) -> None:
    scenario = CATALOGUE[ALONE[mutant][0]]
    planned = hunt_outcome(
        MUTANTS[mutant], [scenario], tmp_path / "plan", CampaignOptions(explore="0")
    )
    assert not planned.result.caught, planned.result
    explored = hunt_outcome(MUTANTS[mutant], [scenario], tmp_path / "explored")
    assert explored.result.caught and explored.run is not None
    assert explored.run.schedule_file is not None
