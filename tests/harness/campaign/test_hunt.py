"""The hunt: the campaign's plan smallest-first, stopping at the first run judged false (or,
for a team's own engine, going on to the end of the plan)."""

from __future__ import annotations

from pathlib import Path

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.hunt import engine_hunt, hunt, hunt_config, hunt_outcome
from killpoint.harness.checkers import check_all
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.options import CampaignOptions, declared
from killpoint.harness.results import RunResult
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.schedule import load_schedule
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS
from tests.support.options import sample

ORDER = [
    *("clean", "named", "generated", "single", "network", "real", "pair"),
    *("generated", "pair", "double", "generated"),
]


def test_the_plan_runs_smallest_schedules_first(tmp_path: Path) -> None:
    """Clean runs, named cases, the operators' reconcile and retry on the named cases' stops,
    single crashes, network faults, the real-tier pass, the pauses at an effect's `started`, a
    first pass of generated schedules, the other paired workers and crashes, the rest of the
    generated schedules and then every operator control."""
    runs: list[RunResult] = []
    options = CampaignOptions(double_limit=10)
    outcome = hunt_outcome(REFERENCE, [CATALOGUE["email"]], tmp_path, options, on_run=runs.append)
    assert not outcome.result.caught
    assert outcome.runs == len(runs)
    kinds = [r.kind for r in runs]
    phases = [k for n, k in enumerate(kinds) if n == 0 or kinds[n - 1] != k]
    assert phases == ORDER  # the exploration in two passes, around the pairs and doubles
    pairs = [r for r in runs if r.kind == "pair"]
    doubles = [r for r in runs if r.kind == "double"]
    assert pairs and doubles
    assert max(runs.index(r) for r in pairs) < min(runs.index(r) for r in doubles)


def test_phases_span_every_scenario_before_the_next_phase(tmp_path: Path) -> None:
    runs: list[RunResult] = []
    chosen = [CATALOGUE["email"], CATALOGUE["handoff_incompatible"]]
    hunt_outcome(REFERENCE, chosen, tmp_path, CampaignOptions(double_limit=2), on_run=runs.append)
    assert [(r.kind, r.scenario) for r in runs[:2]] == [
        ("clean", "email"),
        ("clean", "handoff_incompatible"),
    ]


def test_stops_at_the_first_false_run_and_its_schedule_replays_false(tmp_path: Path) -> None:
    spec = MUTANTS["state_updated_after_call"]
    runs: list[RunResult] = []
    outcome = hunt_outcome(spec, [CATALOGUE["research_publish"]], tmp_path, on_run=runs.append)
    result = outcome.result
    assert result.caught and result.runs_to_detection == len(runs) == outcome.runs
    assert all(r.valid is not False for r in runs[:-1]) and runs[-1].valid is False
    assert outcome.run is not None and outcome.run.schedule_file is not None
    saved = load_schedule(outcome.run.schedule_file)
    assert saved == result.schedule
    with World.open(tmp_path / "replay") as world:
        history = run_schedule(world, CATALOGUE["research_publish"], saved, spec)
    verdicts = check_all(history, CATALOGUE["research_publish"].workflow)
    assert any(v.checker == result.checker and v.valid is False for v in verdicts)


def test_a_campaign_runs_no_interleavings_when_told_not_to(tmp_path: Path) -> None:
    config = CampaignConfig(
        engine=REFERENCE,
        scenarios=[CATALOGUE["handoff_incompatible"]],
        workdir=tmp_path,
        double_limit=3,
        interleave=False,
    )
    with Campaign(config) as campaign:
        result = campaign.run()
    assert not any(r.schedule.interleave for r in result.runs if r.kind != "named")
    assert {r.kind for r in result.runs} >= {"clean", "single", "double"}


def test_a_hunt_says_whether_the_plan_or_the_exploration_found_the_mutant(
    tmp_path: Path,
) -> None:
    planned = hunt(MUTANTS["state_updated_after_call"], [CATALOGUE["research_publish"]], tmp_path)
    assert planned.found_by == "plan" and planned.seconds_to_detection is not None
    # a verification read that fails: no schedule of the plan faults one
    explored = hunt(
        MUTANTS["failed_read_taken_as_verified"], [CATALOGUE["research_publish"]], tmp_path / "x"
    )
    assert explored.caught and explored.found_by == "exploration"
    assert explored.schedule is not None and explored.schedule.network.rules


def test_hunt_returns_the_mutant_score(tmp_path: Path) -> None:
    result = hunt(
        MUTANTS["completion_without_verification"], [CATALOGUE["research_publish"]], tmp_path
    )
    assert result.mutant == "completion_without_verification"
    assert (result.caught, result.checker, result.runs_to_detection) == (
        True,
        "verified_completion",
        1,
    )


def test_a_hunt_takes_the_phases_it_offers_and_keeps_the_campaigns_own_options_at_default(
    tmp_path: Path,
) -> None:
    """`run --mutants --tier real --db URL --shard 2/3` hunts as `killpoint mutants` does: the
    phases both offer (seed, doubles, exploration, …) carry over; the tier, store, slice, named
    cases, deploys and worker timeout are the campaign's alone."""
    given = CampaignOptions().merged(
        {s.name: sample(s) for s in declared(CampaignOptions) if s.name not in ("engine", "jobs")}
    )
    config = hunt_config(REFERENCE, [], tmp_path, given)
    phases = [*("seed", "double", "double_limit", "interleave", "network", "explore", "lies")]
    phases += ["neighbours", "operators", "canaries", "pauses", "real_pass"]
    assert {n: getattr(config, n) for n in phases} == {n: getattr(given, n) for n in phases}
    campaigns = ("tier", "store_url", "shard", "named", "deploys", "worker_timeout")
    defaults = CampaignConfig(scenarios=[], workdir=tmp_path, engine=REFERENCE)
    assert {n: getattr(config, n) for n in campaigns} == {
        n: getattr(defaults, n) for n in campaigns
    }
    assert (config.tier, config.shard) != (given.tier, given.shard)


def test_an_engine_hunt_goes_on_past_its_first_finding_in_the_same_order(tmp_path: Path) -> None:
    """The hunt of a team's engine makes the mutant hunt's runs, then the rest of the plan;
    with `first` it stops where the mutant hunt stops."""
    spec, chosen = MUTANTS["state_updated_after_call"], [CATALOGUE["research_publish"]]
    options = CampaignOptions(double=False, interleave=False, explore="0")
    caught = hunt_outcome(spec, chosen, tmp_path / "one", options)
    whole = engine_hunt(spec, chosen, tmp_path / "whole", options)
    first = engine_hunt(spec, chosen, tmp_path / "first", options, first=True)
    assert whole.whole and not first.whole
    assert len(first.runs) == caught.runs < len(whole.runs)
    assert [r.run_id for r in first.runs] == [r.run_id for r in whole.runs[: caught.runs]]
    assert first.runs[-1].valid is False and caught.run is not None
    assert first.runs[-1].run_id == caught.run.run_id
    assert sum(r.valid is False for r in whole.runs) > 1
