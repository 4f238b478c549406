"""A shared world alone exposes the mutants that drop a scope: on a hand-written schedule each is
judged false beside a neighbour (`isolation` objecting, whichever checker objects first) and
true on the same schedule without one; the reference passes the schedule beside the neighbour.
The default hunt catches each; without neighbours (`--no-neighbours`) the whole hunt does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.fake_services import FaultPlan, FaultRule
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.hunt import hunt_outcome
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.options import EXPLORE, CampaignOptions
from killpoint.harness.results import RunResult
from killpoint.harness.schedule import FaultSchedule, HitPoint, Neighbour
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS
from tests.support.fixtures import THOROUGH

CHARGED = HitPoint(worker=0, step="charge", boundary="transport.response_received")
LOST_SEND = FaultPlan.of(
    FaultRule(service="outbound", operation="send", occurrence=1, mode="lost_response")
)

# (mutant, scenario, the schedule's faults, its neighbours, the checker objecting first)
CASES = [
    # a second tenant's identical order, charged between the run's crash and its recovery: the
    # run's refund key is the tenant's, its refund is replayed, it completes refunding nothing
    (
        "idempotency_key_without_workflow",
        "approval_refund",
        {"crashes": (CHARGED,)},
        (Neighbour(kind="tenant", before_worker=1),),
        "single_effect",
    ),
    # the same message to the same customer from a second shop: the outbox's search finds the
    # other shop's message under the run's fingerprint
    (
        "idempotency_key_without_workflow",
        "email_outbox",
        {"network": LOST_SEND},
        (Neighbour(kind="tenant", before_worker=0),),
        "isolation",
    ),
    # another workflow of the tenant approved at the refund gate before the run begins: the
    # run's refund goes out on that approval
    (
        "approval_found_by_scope",
        "approval_refund",
        {},
        (Neighbour(kind="workflow", before_worker=0),),
        "authority",
    ),
    # …and a second tenant's approval opens it just the same
    (
        "approval_found_by_scope",
        "approval_refund",
        {"crashes": (CHARGED,)},
        (Neighbour(kind="tenant", before_worker=1),),
        "authority",
    ),
]


def _run(engine: str, scenario: str, fields: dict[str, object], root: Path) -> RunResult:
    spec = REFERENCE if engine == "reference" else MUTANTS[engine]
    schedule = FaultSchedule.model_validate({"scenario": scenario, "run_id": "world", **fields})
    config = CampaignConfig(scenarios=[CATALOGUE[scenario]], workdir=root, engine=spec)
    with Campaign(config) as campaign:
        result, _ = campaign.execute(CATALOGUE[scenario], schedule, "single")
    return result


def _verdicts(result: RunResult) -> dict[str, object]:
    return {v.checker: v.valid for v in result.verdicts}


@pytest.mark.parametrize(
    ("mutant", "scenario", "faults", "neighbours", "first"),
    CASES,
    ids=[f"{c[0]}-{c[1]}-{c[3][0].kind}" for c in CASES],
)
def test_caught_beside_a_neighbour_escapes_alone_and_the_reference_passes(
    mutant: str,
    scenario: str,
    faults: dict[str, object],
    neighbours: tuple[Neighbour, ...],
    first: str,
    tmp_path: Path,
) -> None:
    beside = {**faults, "neighbours": neighbours}
    caught = _run(mutant, scenario, beside, tmp_path / "beside")
    assert caught.valid is False
    assert next(v.checker for v in caught.verdicts if v.valid is False) == first
    assert _verdicts(caught)["isolation"] is False
    alone = _run(mutant, scenario, faults, tmp_path / "alone")
    assert alone.valid is True, [v for v in alone.verdicts if v.valid is not True]
    reference = _run("reference", scenario, beside, tmp_path / "reference")
    assert reference.valid is True, [v for v in reference.verdicts if v.valid is not True]


@pytest.mark.parametrize("mutant", ["idempotency_key_without_workflow", "approval_found_by_scope"])
def test_the_whole_hunt_without_neighbours_lets_it_escape(mutant: str, tmp_path: Path) -> None:
    """The plan, the pairs and doubles, the exploration (a tenth of it, but under `thorough`):
    nothing but a neighbour shows it."""
    chosen = [CATALOGUE["approval_refund"]]
    explore = EXPLORE if THOROUGH else "6"
    escaped = hunt_outcome(
        MUTANTS[mutant],
        chosen,
        tmp_path / "off",
        CampaignOptions(neighbours=False, explore=explore),
    )
    assert not escaped.result.caught
    caught = hunt_outcome(MUTANTS[mutant], chosen, tmp_path / "on")
    assert caught.result.caught and caught.result.schedule is not None
    assert caught.result.schedule.neighbours
