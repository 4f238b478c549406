"""A campaign in several processes is the campaign in one: same runs, same verdicts."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint import scenarios
from killpoint.contract.errors import KillpointError
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.jobs import hunts_in_processes, in_processes, run_campaign
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.results import CampaignResult, RunResult
from killpoint.harness.schedule import FaultSchedule
from killpoint.scenarios.cases import CASES


def _verdicts(result: CampaignResult) -> dict[tuple[str, str], object]:
    return {
        (r.scenario, r.run_id): (r.final_status, [(v.checker, v.valid) for v in r.verdicts])
        for r in result.runs
    }


def test_a_campaign_in_two_processes_gives_the_verdicts_of_one(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    chosen = [scenarios.get("order_saga"), scenarios.get("research_publish")]
    seen: list[RunResult] = []

    def config(name: str) -> CampaignConfig:
        return CampaignConfig(
            engine=REFERENCE, scenarios=chosen, workdir=tmp_path / name, double_limit=10
        )

    totals: list[int] = []
    one = run_campaign(config("one"), 1)
    two = run_campaign(
        CampaignConfig(
            **{**config("two").__dict__, "on_run": seen.append, "on_plan": totals.append}
        ),
        2,
    )

    assert _verdicts(two) == _verdicts(one)
    assert [c.boundaries_crashed for c in two.scenarios] == [
        c.boundaries_crashed for c in one.scenarios
    ]
    assert two.shard is None and not two.violations
    # every run reported its progress back to this process (recordings run in both shards)
    assert {(r.scenario, r.run_id) for r in seen} == set(_verdicts(one))
    # the total is told once both shards gave theirs, and at the end it is the runs reported
    assert totals and totals[-1] == len(seen)


def test_a_failing_process_fails_the_campaign_with_its_traceback() -> None:
    def fine(report: object) -> int:
        return 1

    def broken(report: object) -> int:
        raise ValueError("the store is on fire")

    with pytest.raises(KillpointError, match="the store is on fire"):
        in_processes([fine, broken])
    assert in_processes([fine, fine]) == [1, 1]


def test_hunts_spread_over_processes_come_back_in_order() -> None:
    hunts = [lambda k=k: k * k for k in range(5)]
    for jobs in (2, 1):
        ended: list[int] = []
        assert hunts_in_processes(hunts, jobs, ended.append) == [0, 1, 4, 9, 16]
        assert sorted(ended) == [0, 1, 4, 9, 16]  # each told as it ended, in this process


def test_runs_of_one_world_do_not_depend_on_their_order(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    """Found by sharding the whole catalogue: a run that corrupted a shared artifact file made
    a later run that produced the same content end in needs_review, so a shard's order of runs
    changed a verdict."""
    case = {c.name: c for c in CASES}
    publish = scenarios.get("research_publish")
    config = CampaignConfig(engine=REFERENCE, scenarios=[publish], workdir=tmp_path)
    with Campaign(config) as campaign:
        campaign.execute(publish, FaultSchedule(scenario=publish.name, run_id="clean"), "clean")
        corrupt = case["artifact_hash_differs"]
        campaign.execute(publish, corrupt.schedule, "named", corrupt.expect)
        later = case["model_or_prompt_version_changes"]
        result, _ = campaign.execute(publish, later.schedule, "named", later.expect)
    assert result.valid is True, [v.summary for v in result.verdicts if v.valid is not True]


def test_jobs_refuse_a_database_url_that_pins_one_schema_for_all(tmp_path: Path) -> None:
    pinned = "postgresql+psycopg://postgres@127.0.0.1:5432/test?options=-csearch_path%3Dkp_mine"
    config = CampaignConfig(
        engine=REFERENCE, scenarios=[scenarios.get("email")], workdir=tmp_path, store_url=pinned
    )
    with pytest.raises(KillpointError, match="pins one schema"):
        run_campaign(config, 2)
