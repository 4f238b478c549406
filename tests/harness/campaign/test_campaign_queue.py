"""`killpoint queue` on the store a campaign leaves in its folder lists exactly the runs the
campaign counted as needing review or quarantined."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.catalogue import installed
from killpoint.harness.cli import app
from killpoint.harness.engines.reference import QUEUE_STORE, REFERENCE
from killpoint.harness.run.databases import drop_scratch
from killpoint.harness.run.world import TENANT
from tests.support.fixtures import TEST_KEY

WAITING = ("needs_review", "quarantined")


def test_the_queue_of_a_campaign_s_store_is_what_the_campaign_counted(
    tmp_path: Path, checkpoint_key: bytes, backend: str, request: pytest.FixtureRequest
) -> None:
    """The campaign's own store on either backend; the queue it leaves is a SQLite file."""
    url = request.getfixturevalue("postgres_url") if backend == "postgres" else None
    config = CampaignConfig(
        store_url=url,
        engine=REFERENCE,
        scenarios=[installed().scenario("email"), installed().scenario("order_saga")],
        workdir=tmp_path,
        double=False,
        interleave=False,
        explore="0",
    )
    with Campaign(config) as campaign:
        result = campaign.run()
        used = campaign.world.store.url
    drop_scratch(url, used)  # the campaign's schema is kept for inspect; not a test's to keep
    queue = f"sqlite:///{tmp_path / QUEUE_STORE}"
    counted = {f"{r.scenario}:{r.run_id}": r.final_status for r in result.runs}
    assert len(counted) == len(result.runs)  # one workflow per run: kept runs never meet
    expected = {wf: status for wf, status in counted.items() if status in WAITING}
    assert set(expected.values()) == set(WAITING)

    shown = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY}).invoke(
        app,
        ["queue", "--db", queue, "--tenant", TENANT, "--json"]
        + [flag for reason in WAITING for flag in ("--reason", reason)],
    )

    assert shown.exit_code == 0, shown.stderr
    listed = {e["workflow_id"]: e["reason"] for e in json.loads(shown.stdout)}
    assert listed == expected


def test_the_controls_a_named_case_s_operator_used_are_in_its_result_and_on_the_page(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    """Issue 17, point 8: the reconcile the case's operator asked for, refused by the reference
    engine (the mailer cannot be asked), is kept on the run and shown beside the queue."""
    from killpoint.harness.results import CampaignResult
    from killpoint.reports.html import render_html

    email = installed().scenario("email")
    [case] = [c for c in email.cases if c.name == "operator_reconcile_after_lost_mail"]
    config = CampaignConfig(engine=REFERENCE, scenarios=[email], workdir=tmp_path)
    with Campaign(config) as campaign:
        run, history = campaign.execute(email, case.schedule, "named", case.expect)
    assert history.controls == run.controls and len(run.controls) == 1
    assert run.controls[0].startswith("reconcile refused: ") and run.final_status == "needs_review"

    alone = CampaignResult(
        engine="reference",
        tier="inprocess",
        backend="sqlite",
        started_at="",
        scenarios=[],
        runs=[run],
    )
    page = render_html(alone)
    section = page.split('<h3 id="operated">', 1)[1].split("</table>", 1)[0]
    assert run.label in section and "reconcile refused: " in section


def test_the_queues_of_a_sharded_campaign_hold_each_waiting_run_once(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    """Every shard makes each recording; only the first queues one that ends in review, so the
    shards' queues together list the merged campaign's waiting runs, each once."""
    from killpoint.harness.campaign.merge import merge_results

    thin = installed().scenario("research_publish_thin_draft")  # its clean run ends in review
    results, listed = [], []
    for i in (1, 2):
        config = CampaignConfig(
            engine=REFERENCE,
            scenarios=[thin],
            workdir=tmp_path / f"shard-{i}",
            shard=(i, 2),
            double=False,
            interleave=False,
            network=False,
            explore="0",
        )
        with Campaign(config) as campaign:
            results.append(campaign.run())
        queue = f"sqlite:///{config.workdir / QUEUE_STORE}"
        shown = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY}).invoke(
            app, ["queue", "--db", queue, "--tenant", TENANT, "--json"]
        )
        assert shown.exit_code == 0, shown.stderr
        listed += [e["workflow_id"] for e in json.loads(shown.stdout)]
    merged = merge_results(results)
    waiting = sorted(f"{r.scenario}:{r.run_id}" for r in merged.runs if r.final_status in WAITING)
    assert f"{thin.name}:clean" in waiting
    assert sorted(listed) == waiting
