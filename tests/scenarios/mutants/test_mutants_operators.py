"""The retry mutant is caught only by an operator who acts under faults: on the dead-letter
case's stop (a charge in doubt), with the exploration's operator retrying, and a crash as the
retried charge's response comes back, the mutant is judged false; the same schedule without
the operator is judged true; the reference passes it with the operator, with and without the
crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import RunResult
from killpoint.harness.schedule import FaultSchedule, HitPoint
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS

SCENARIO = CATALOGUE["order_saga"]
STOP = next(c for c in SCENARIO.cases if c.name == "dead_letter_after_max_deliveries").schedule
# the worker that dead-letters the run, and in which the operator retries its charge
CONTROL_WORKER = 20
SENT = HitPoint(worker=CONTROL_WORKER, step="charge", boundary="transport.response_received")


def _schedule(controls: tuple[str, ...], *crashes: HitPoint) -> FaultSchedule:
    return STOP.model_copy(
        update={
            "run_id": "operator-retry",
            "controls": controls,
            "crashes": (*STOP.crashes, *crashes),
            "max_workers": STOP.max_workers + 2,
        }
    )


def _run(spec: EngineSpec, schedule: FaultSchedule, root: Path) -> tuple[RunResult, History]:
    config = CampaignConfig(scenarios=[SCENARIO], workdir=root, engine=spec)
    with Campaign(config) as campaign:
        return campaign.execute(SCENARIO, schedule, "generated")


def _charges(history: History) -> int:
    return sum(1 for a in history.applied if a.operation == "create_charge")


@pytest.mark.parametrize("crashes", [(), (SENT,)], ids=["retried", "killed-as-it-came-back"])
def test_a_retry_under_a_fresh_key_charges_twice_when_the_operator_retries(
    crashes: tuple[HitPoint, ...], tmp_path: Path
) -> None:
    result, history = _run(
        MUTANTS["fresh_key_retry_control"], _schedule(("retry",), *crashes), tmp_path
    )
    assert _charges(history) == 2
    false = {v.checker for v in result.verdicts if v.valid is False}
    assert "single_effect" in false, result.verdicts


def test_without_the_operator_the_same_stop_passes(tmp_path: Path) -> None:
    result, history = _run(MUTANTS["fresh_key_retry_control"], _schedule(()), tmp_path)
    assert history.final_status == "dead_lettered" and _charges(history) == 1
    assert result.valid is not False, result.verdicts


@pytest.mark.parametrize("crashes", [(), (SENT,)], ids=["retried", "killed-as-it-came-back"])
def test_the_reference_retries_under_the_same_key_once(
    crashes: tuple[HitPoint, ...], tmp_path: Path
) -> None:
    result, history = _run(REFERENCE, _schedule(("retry",), *crashes), tmp_path)
    assert history.final_status == "completed" and _charges(history) == 1
    assert [v for v in result.verdicts if v.valid is not True] == []
    assert history.audit is not None and [a.control for a in history.audit] == ["retry"]
