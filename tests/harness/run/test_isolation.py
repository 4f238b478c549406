"""Every run of a campaign starts from a world no earlier run touched, so its verdict depends on
its schedule alone: replayed in a fresh world it gives the same verdicts, in either tier, on
either backend, for an engine with a reset hook or without one."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from killpoint import scenarios
from killpoint.contract.artifacts import FolderArtifacts
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.engines.reference import REFERENCE, open_store
from killpoint.harness.results import RunResult
from killpoint.harness.run.databases import drop_schemas, dropped, schema_of
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import EPOCH, World
from killpoint.harness.schedule import FaultSchedule, HitPoint, Tamper
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS
from tests.support.fixtures import THOROUGH, check_reachable, server_url

# three mutants that single crashes over the whole catalogue catch, by three checkers
VIOLATING = (
    "fresh_idempotency_key_on_resume",
    "approvals_not_revalidated",
    "artifact_parsed_before_hash_check",
)
# where they violate, and the mailer beside them (`thorough`: the whole catalogue)
CAUGHT_IN = ("order_saga", "approval_refund", "research_publish", "email")
NO_RESET = replace(REFERENCE, name="reference-without-reset", reset=None)


def _crash(step: str, boundary: str) -> FaultSchedule:
    return FaultSchedule(
        scenario="research_publish",
        run_id=f"crash-{step}-{boundary}",
        crashes=(HitPoint(worker=0, step=step, boundary=boundary),),
        tamper=(Tamper(after_worker=0, kind="artifact_corrupt"),),
    )


def _verdicts(result: RunResult) -> dict[str, object]:
    return {v.checker: v.valid for v in result.verdicts}


def test_the_reference_reset_leaves_no_row_and_no_artifact(world: World) -> None:
    run_schedule(world, scenarios.get("research_publish"), _crash("draft", "step.begin"), REFERENCE)
    store = open_store(world.store)
    artifacts = world.store.workdir / "artifacts"
    FolderArtifacts(artifacts).put(b"an artifact of the run")
    assert store.workflow_ids() and any(p.is_file() for p in artifacts.rglob("*"))
    assert REFERENCE.reset is not None
    REFERENCE.reset(world.store)
    assert store.workflow_ids() == []
    assert not any(p.is_file() for p in artifacts.rglob("*"))  # the folders may stay


@pytest.mark.parametrize("engine", [REFERENCE, NO_RESET], ids=["reset-hook", "no-hook"])
def test_a_run_after_others_has_the_history_of_the_same_run_in_a_new_world(
    world: World, tmp_path: Path, engine: object
) -> None:
    """Same schedule, same history (wall times aside), whatever ran in the world before it:
    the same run id even, which would find its own earlier workflow in a shared store."""
    assert engine is REFERENCE or engine is NO_RESET
    scenario = scenarios.get("research_publish")
    schedule = _crash("draft", "step.begin")
    for earlier in (_crash("research", "step.begin"), schedule, _crash("publish", "step.begin")):
        run_schedule(world, scenario, earlier, engine)
    assert world.clock.now() > EPOCH  # earlier runs moved the clock: the next starts over
    after_others = run_schedule(world, scenario, schedule, engine)
    fresh = World.open(tmp_path / "fresh", world.store_url)
    with fresh, dropped(world.store_url, fresh.store.url):
        alone = run_schedule(fresh, scenario, schedule, engine)
    assert after_others.identity() == alone.identity()
    assert after_others.final_status in ("needs_review", "completed")


def test_an_engine_without_a_reset_hook_gets_a_new_store_per_run(world: World) -> None:
    scenario = scenarios.get("email")
    urls = []
    for n in range(3):
        clean = FaultSchedule(scenario="email", run_id=f"clean-{n}")
        run_schedule(world, scenario, clean, NO_RESET)
        urls.append(world.store.url)
    assert len(set(urls)) == 3
    if world.store_url is None:  # the previous run's own folder is gone with its database
        assert sorted(p.name for p in (world.workdir / "stores").iterdir()) == ["2"]


@pytest.mark.parametrize(
    ("tier", "backend", "mutants", "explore"),
    [
        ("inprocess", "sqlite", 3, "3"),
        ("real", "sqlite", 1, "0"),
        pytest.param("inprocess", "postgres", 1, "0", marks=pytest.mark.postgres),
    ],
)
def test_every_violation_of_a_campaign_replays_alike_in_a_fresh_campaign(
    tier: str, backend: str, mutants: int, explore: str, tmp_path: Path, checkpoint_key: bytes
) -> None:
    """Issue 13's acceptance, over the catalogue (`ci`: a slice of it): each mutant's violating
    runs, replayed one by one in a new campaign (a new world), give the verdicts the campaign
    gave. The campaign is shrunk to its clean runs, single crashes, named cases and (in
    process) a few explored schedules each, to keep it short."""
    url = None
    if backend == "postgres":
        url = server_url()
        check_reachable(url)
    made: list[str] = []
    try:
        compared = _replay_violations(tier, url, mutants, explore, tmp_path, made)
    finally:
        if url is not None:
            drop_schemas(url, [schema_of(u) for u in made])
    assert compared >= mutants


def _replay_violations(
    tier: str, url: str | None, mutants: int, explore: str, tmp_path: Path, made: list[str]
) -> int:
    """How many violations of `mutants` mutants' campaigns replayed with the same verdicts."""
    compared = 0
    catalogue = list(CATALOGUE.values()) if THOROUGH else [CATALOGUE[s] for s in CAUGHT_IN]
    for name in VIOLATING[:mutants]:
        config = CampaignConfig(
            store_url=url,
            scenarios=catalogue,
            workdir=tmp_path / name,
            engine=MUTANTS[name],
            tier=tier,  # type: ignore[arg-type]
            double=False,
            interleave=False,
            network=False,
            explore=explore,
        )
        with Campaign(config) as campaign:
            violations = campaign.run().violations
            made.append(campaign.world.store.url)
        assert violations, f"{name} has no violation over the catalogue"
        with Campaign(replace(config, workdir=tmp_path / f"{name}-replay")) as fresh:
            made.append(fresh.world.store.url)
            for run in violations:
                scenario = CATALOGUE[run.scenario]
                case = scenario.case(run.schedule.run_id)  # a named case: its expectation too
                expect = None if case is None else case.expect
                replayed, _ = fresh.execute(scenario, run.schedule, "replay", expect)
                assert _verdicts(replayed) == _verdicts(run), run.label
                compared += 1
    return compared
