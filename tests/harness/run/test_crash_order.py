"""The order of the exhaustive single crashes: every boundary hit crashed exactly once, the
riskiest first (the lost-response windows, then the effect protocol, then the routine ones)."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.contract import boundaries as b
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.hunt import hunt_outcome
from killpoint.harness.campaign.plan import Risk, crash_risk, singles
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.options import CampaignOptions
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import RunResult
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule, HitPoint
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS


def _recording(root: Path, scenario: Scenario, spec: EngineSpec = REFERENCE) -> History:
    with World.open(root / scenario.name) as world:
        clean = FaultSchedule(scenario=scenario.name, run_id="clean")
        return run_schedule(world, scenario, clean, spec)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_every_hit_is_crashed_exactly_once_riskiest_first(
    name: str, tmp_path: Path, checkpoint_key: bytes
) -> None:
    scenario = CATALOGUE[name]
    recording = _recording(tmp_path, scenario)
    hits = [h for h in recording.hits if h.worker == 0]
    ranked = singles(scenario, recording)
    positions = [int(run.schedule.run_id.removeprefix("single-")) for run in ranked]
    assert sorted(positions) == list(range(len(hits)))  # each hit once, named by its position
    for run, n in zip(ranked, positions, strict=True):
        hit = hits[n]
        point = HitPoint(worker=0, step=hit.step, boundary=hit.boundary, occurrence=hit.occurrence)
        assert run.hit == hit and run.schedule.crashes == (point,) and run.kind == "single"
        assert run.risk is crash_risk(recording)[n]
    keys = [(run.risk, n) for run, n in zip(ranked, positions, strict=True)]
    assert keys == sorted(keys)  # by risk, then in the order of the hits


def test_the_lost_response_windows_come_first_then_the_effect_protocol(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    saga = CATALOGUE["order_saga"]
    recording = _recording(tmp_path, saga)
    ranked = [(run.risk, run.hit.label()) for run in singles(saga, recording) if run.hit]
    assert ranked[:2] == [
        (Risk.DELIVERED, "charge:transport.response_received"),
        (Risk.DELIVERED, "ship:transport.response_received"),
    ]
    protocol = [label for risk, label in ranked if risk is Risk.PROTOCOL]
    assert protocol == [
        f"{step}:{boundary}"
        for step in ("charge", "ship")
        for boundary in (
            b.INTENT_COMMITTED,
            b.STARTED_COMMITTED,
            b.RESPONSE_READ,
            b.RECEIPT_COMMITTED,
        )
    ]
    routine = [label for risk, label in ranked if risk is Risk.ROUTINE]
    assert ranked[-len(routine) :] == [(Risk.ROUTINE, label) for label in routine]
    # (a publication that lags is read again: its later reads carry an occurrence, `#2` ...)
    assert {label.split(":")[-1].split("#")[0] for label in routine} == {
        b.LEASE_ACQUIRED,
        b.STEP_BEGIN,
        b.INTENT_BUILT,
        b.VERIFY_READ,
        b.READ_RETURNED,
        b.CHECKPOINT_BUILT,
        b.CHECKPOINT_COMMITTED,
    }
    assert routine[0] == b.LEASE_ACQUIRED


def test_a_delivered_request_is_read_from_the_journal_not_from_the_boundary_name(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    """An engine we cannot instrument names its boundaries its own way: the hit after its
    call is still the lost-response window, an unknown name without a call is crashed with the
    effect protocol, and a read (the verify step's GET) delivers nothing."""
    recording = _recording(tmp_path, CATALOGUE["order_saga"])
    renamed = [
        h.model_copy(update={"boundary": f"vendor.{h.boundary.replace('.', '_')}"})
        for h in recording.hits
    ]
    risks = crash_risk(recording.model_copy(update={"hits": renamed}))
    hits = [h for h in recording.hits if h.worker == 0]
    for hit, risk in zip(hits, risks, strict=True):
        if hit.boundary == b.RESPONSE_RECEIVED:
            assert risk is Risk.DELIVERED, hit.label()
        else:
            assert risk is Risk.PROTOCOL, hit.label()
    reads = [i for i, h in enumerate(hits) if h.boundary == b.READ_RETURNED]
    assert reads and all(hits[i].journal_seq > hits[i - 1].journal_seq for i in reads)
    assert all(
        hits[i + 1].boundary == b.VERIFY_READ for i in reads if hits[i].step == "verify_charge"
    )
    assert all(crash_risk(recording)[i] is Risk.ROUTINE for i in reads)


def test_a_campaign_crashes_in_that_order_and_reports_boundaries_in_hit_order(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    config = CampaignConfig(
        engine=REFERENCE,
        scenarios=[CATALOGUE["email"]],
        workdir=tmp_path,
        double=False,
        interleave=False,
        network=False,
        named=False,
    )
    with Campaign(config) as campaign:
        result = campaign.run()
    crashed = [r.crashed_at for r in result.runs if r.kind == "single"]
    assert crashed[0] == ["w0 notify:transport.response_received"]
    coverage = result.scenarios[0]
    assert sorted(c[0].removeprefix("w0 ") for c in crashed) == sorted(
        coverage.boundaries_discovered
    )
    assert coverage.boundaries_crashed == coverage.boundaries_discovered


def test_a_hunt_tries_the_lost_response_windows_of_every_scenario_first(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    runs: list[RunResult] = []
    chosen = [CATALOGUE["email"], CATALOGUE["order_saga"]]
    hunt_outcome(
        REFERENCE,
        chosen,
        tmp_path,
        CampaignOptions(double=False, interleave=False, network=False),
        on_run=runs.append,
    )
    first = [(r.scenario, r.crashed_at) for r in runs if r.kind == "single"][:3]
    assert first == [
        ("email", ["w0 notify:transport.response_received"]),
        ("order_saga", ["w0 charge:transport.response_received"]),
        ("order_saga", ["w0 ship:transport.response_received"]),
    ]


def test_a_mutant_that_repeats_a_delivered_call_is_caught_by_the_first_single_crash(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    runs: list[RunResult] = []
    outcome = hunt_outcome(
        MUTANTS["fresh_idempotency_key_on_resume"],
        [CATALOGUE["order_saga"]],
        tmp_path,
        # without the operators, whose retry of a named case's charge in doubt catches it earlier
        CampaignOptions(double=False, interleave=False, network=False, operators=False),
        on_run=runs.append,
    )
    assert outcome.result.caught and outcome.run is not None
    assert [r.kind for r in runs].count("single") == 1
    assert outcome.run.crashed_at == ["w0 charge:transport.response_received"]


def test_pairs_and_doubles_follow_the_first_crash_in_hit_order(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    """Only the singles are ranked by risk; a second worker or a second death in the recovery
    follows the first crash's place in the workflow (two workers after a crash at the lease are
    where a missing fencing token shows)."""
    config = CampaignConfig(
        engine=REFERENCE,
        scenarios=[CATALOGUE["email"]],
        workdir=tmp_path,
        double_limit=30,
        network=False,
        named=False,
    )
    with Campaign(config) as campaign:
        result = campaign.run()
    singles_run = [int(r.run_id.removeprefix("single-")) for r in result.runs if r.kind == "single"]
    assert singles_run != sorted(singles_run)  # the singles are ranked ...
    for kind in ("pair", "pause", "double"):  # a pause is a pair, named apart
        firsts = [int(r.run_id.split("-")[1]) for r in result.runs if r.run_id.startswith(kind)]
        assert firsts and firsts == sorted(firsts), kind  # ... what follows them is not
        assert set(firsts) <= set(singles_run) and len(set(firsts)) > 1
