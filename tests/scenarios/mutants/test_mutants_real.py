"""A real death alone exposes the mutants that test only graceful shutdown (`graceful.py`): on
the same single crash each is judged false in the real tier (a worker SIGKILLed: no `finally`
run, its memory gone) and true in process (an exception: both survive); the reference passes
the real schedule. The default hunt catches each by its real-tier pass; without it
(`--no-real-pass`) the whole hunt does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.hunt import hunt_outcome
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.options import EXPLORE, CampaignOptions
from killpoint.harness.results import RunResult
from killpoint.harness.schedule import FaultSchedule, HitPoint, Tier
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS
from tests.support.fixtures import THOROUGH

SHIPPED = HitPoint(worker=0, step="ship", boundary="transport.response_received")
CHARGED = HitPoint(worker=0, step="charge", boundary="checkpoint.committed")

# (mutant, the single crash, the checker objecting in the real tier)
CASES = [
    # the shipment reached the publisher; the next process's table never saw it: sent again
    ("sent_table_in_memory", SHIPPED, "single_effect"),
    # the dead worker's lease is still named: every later worker leaves the run to it
    ("lease_freed_in_finally", CHARGED, "progress"),
]


def _run(engine: str, crash: HitPoint, tier: Tier, root: Path) -> RunResult:
    spec = REFERENCE if engine == "reference" else MUTANTS[engine]
    schedule = FaultSchedule(scenario="order_saga", run_id="graceful", crashes=(crash,), tier=tier)
    config = CampaignConfig(scenarios=[CATALOGUE["order_saga"]], workdir=root, engine=spec)
    with Campaign(config) as campaign:  # an in-process campaign: a real schedule keeps its tier
        result, _ = campaign.execute(CATALOGUE["order_saga"], schedule, "real")
    assert result.schedule.tier == tier
    return result


@pytest.mark.parametrize(("mutant", "crash", "first"), CASES, ids=[c[0] for c in CASES])
def test_caught_by_a_real_death_right_under_an_in_process_one_and_the_reference_passes(
    mutant: str, crash: HitPoint, first: str, tmp_path: Path
) -> None:
    caught = _run(mutant, crash, "real", tmp_path / "real")
    assert caught.valid is False
    assert next(v.checker for v in caught.verdicts if v.valid is False) == first
    in_process = _run(mutant, crash, "inprocess", tmp_path / "inprocess")
    assert in_process.valid is True, [v for v in in_process.verdicts if v.valid is not True]
    reference = _run("reference", crash, "real", tmp_path / "reference")
    assert reference.valid is True, [v for v in reference.verdicts if v.valid is not True]


@pytest.mark.parametrize("mutant", [c[0] for c in CASES])
def test_the_whole_hunt_without_the_real_pass_lets_it_escape(mutant: str, tmp_path: Path) -> None:
    """The plan, the pairs and doubles, the exploration (a tenth of it, but under `thorough`):
    nothing but a real death shows it."""
    chosen = [CATALOGUE["order_saga"]]
    explore = EXPLORE if THOROUGH else "6"
    escaped = hunt_outcome(
        MUTANTS[mutant], chosen, tmp_path / "off", CampaignOptions(real_pass=False, explore=explore)
    )
    assert not escaped.result.caught
    caught = hunt_outcome(
        MUTANTS[mutant], chosen, tmp_path / "on", CampaignOptions(explore=explore)
    )
    assert caught.result.caught and caught.result.schedule is not None
    assert caught.result.schedule.tier == "real"
    assert caught.result.run is not None and caught.result.run.kind == "real"
