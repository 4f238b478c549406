"""DBOS as an engine under test (`killpoint.harness.engines.dbos`), on this machine's PostgreSQL.

Proven here: the naive variant double-charges after one crash, and the schedule file alone
replays it (`killpoint replay FILE`); the keyed variant survives every single crash, a sample
of double crashes, every network fault and every named case of `order_saga`; five catalogue
scenarios run clean through the generic mapping; the history reader returns DBOS's step
records in order; and a forked worker SIGKILLed mid-step is recovered by the next one.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

# The imports after the needs below load the extra they check for, as importorskip's would.
# ruff: noqa: E402
from tests.support.needs import needs, needs_module

needs_module("dbos", "the dbos extra is not installed: pip install 'killpoint[dbos]'")

import sqlalchemy as sa
from typer.testing import CliRunner

from killpoint.contract.errors import KillpointError
from killpoint.harness.campaign.execute import Campaign, CampaignConfig, open_world, run_in_tier
from killpoint.harness.catalogue import installed
from killpoint.harness.cli import app
from killpoint.harness.engines import dbos_store
from killpoint.harness.engines.registry import load_engine
from killpoint.harness.history import History
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule, HitPoint, Tier, save_schedule
from tests.support.frameworks import beside_the_time_finding

SCENARIOS = (
    "order_saga",
    "email",
    "batch",
    "expensive_reuse",
    "research_publish",
    "handoff",
    "approval_refund",
)


def _postgres_reachable(url: str) -> bool:
    engine = sa.create_engine(url)
    try:
        with engine.connect():
            return True
    except sa.exc.SQLAlchemyError:
        return False
    finally:
        engine.dispose()


@pytest.fixture(scope="module", autouse=True)
def _dbos_postgres() -> None:
    """Every test here runs DBOS on a PostgreSQL server: skipped without one, failed under CI."""
    url = os.environ.get(dbos_store.URL_ENV) or dbos_store.DEFAULT_URL
    needs(_postgres_reachable(url), f"DBOS needs PostgreSQL at {url} (${dbos_store.URL_ENV})")


def _crash(
    name: str, step: str, boundary: str, engine: str, tier: Tier = "inprocess"
) -> FaultSchedule:
    point = HitPoint(worker=0, step=step, boundary=boundary, occurrence=1)
    return FaultSchedule(
        scenario="order_saga",
        run_id=name,
        engine=engine,
        crashes=(point,),
        tier=tier,
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with World.open(tmp_path_factory.mktemp("dbos-world")) as opened:
        yield opened


def _run(world: World, scenario: str, schedule: FaultSchedule, variant: str) -> History:
    return run_in_tier(world, installed().scenarios[scenario], schedule, load_engine(variant))


def test_an_unknown_variant_names_the_valid_ones() -> None:
    with pytest.raises(KillpointError, match="naive, keyed"):
        load_engine("dbos:careless")


@pytest.mark.usefixtures("dbos_logs_to_real_stderr")
def test_the_naive_variant_charges_twice_after_one_crash_and_its_file_replays_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A death after the payment service answered and before DBOS recorded the step's output:
    recovery re-runs the step, and the naive key (new per call) charges again."""
    schedule = _crash("naive-charge", "charge", "transport.response_received", "dbos:naive")
    path = save_schedule(schedule, tmp_path / "naive-charge.json")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner(env={"KILLPOINT_DATABASE_URL": None})
    result = runner.invoke(app, ["replay", str(path), "--workdir", str(tmp_path / "out")])
    assert result.exit_code == 1, result.stdout
    assert re.search(r"single_effect +VIOLATION", result.stdout), result.stdout
    keyed = runner.invoke(
        app, ["replay", str(path), "--engine", "dbos:keyed", "--workdir", str(tmp_path / "k")]
    )
    assert keyed.exit_code == 0, keyed.stdout  # the same crash, with a stable key and a lookup


def test_the_keyed_variant_survives_order_saga_s_crashes_faults_and_named_cases(
    tmp_path: Path,
) -> None:
    config = CampaignConfig(
        scenarios=[installed().scenarios["order_saga"]],
        workdir=tmp_path,
        engine=load_engine("dbos:keyed"),
        double_limit=3,
        interleave=False,
        explore="0",
    )
    with Campaign(config) as campaign:
        result = campaign.run()
    kinds = {r.kind for r in result.runs}
    assert {"clean", "single", "double", "network", "named"} <= kinds
    violated = [
        (r.label, v.checker, v.summary)
        for r in beside_the_time_finding(result.runs)
        for v in r.verdicts
        if v.valid is False
    ]
    assert violated == []


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_catalogue_scenario_runs_clean_through_the_generic_mapping(
    world: World, scenario: str
) -> None:
    clean = FaultSchedule(scenario=scenario, run_id="clean", engine="dbos:keyed")
    history = _run(world, scenario, clean, "dbos:keyed")
    assert history.failures == []
    assert [w.end for w in history.workers] == ["stopped"]
    assert history.final_status == installed().scenarios[scenario].expected_status.value


def test_the_reader_returns_dbos_s_step_records_in_workflow_order(world: World) -> None:
    clean = FaultSchedule(scenario="order_saga", run_id="read", engine="dbos:keyed")
    history = _run(world, "order_saga", clean, "dbos:keyed")
    workflow = installed().scenarios["order_saga"].workflow
    expected, state = [], workflow.initial
    while state not in workflow.terminal:
        transition = workflow.transition_from(state)
        assert transition is not None
        state = transition.target
        expected.append(state)
    assert [c.sequence for c in history.checkpoints] == list(range(1, len(expected) + 1))
    assert [c.state for c in history.checkpoints] == expected
    assert history.checkpoints[-1].status == "completed"


def test_a_forked_worker_sigkilled_before_dbos_records_its_step_is_recovered(
    tmp_path: Path,
) -> None:
    schedule = _crash("real-charge", "charge", "checkpoint.built", "dbos:keyed", tier="real")
    with open_world("real", tmp_path, None) as world:
        history = _run(world, "order_saga", schedule, "dbos:keyed")
    assert [w.end for w in history.workers] == ["sigkill", "stopped"]
    assert history.final_status == "completed"
    charges = [a for a in history.applied if a.operation == "create_charge"]
    assert len(charges) == 1


DBOS_THREADS = ("dbos", "queue", "_run_event_loop", "notification", "notifier", "scheduler")


def test_a_killed_worker_leaves_no_dbos_thread_running(world: World) -> None:
    """The in-process death is raised on DBOS's executor thread; the worker's instance is
    destroyed, so nothing of it runs on while the next worker recovers the workflow."""
    schedule = _crash("threads", "charge", "checkpoint.built", "dbos:keyed")
    history = _run(world, "order_saga", schedule, "dbos:keyed")
    assert [w.end for w in history.workers] == ["killed", "stopped"]
    assert history.final_status == "completed"
    for thread in threading.enumerate():
        if any(part in thread.name for part in DBOS_THREADS):
            thread.join(timeout=2.0)
    alive = [t.name for t in threading.enumerate() if any(p in t.name for p in DBOS_THREADS)]
    assert alive == []
