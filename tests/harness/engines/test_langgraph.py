"""LangGraph as an engine under test: caught when naive, clean when keyed, any scenario.

Every run goes through the public harness (campaigns, schedules, the CLI) against
`killpoint.harness.engines.langgraph`, whose progress lives in LangGraph's own SqliteSaver.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

# The imports after the needs below load the extra they check for, as importorskip's would.
# ruff: noqa: E402
from tests.support.needs import needs_module

needs_module("langgraph", "LangGraph is not installed: pip install 'killpoint[langgraph]'")
needs_module(
    "langgraph.checkpoint.sqlite",
    "langgraph-checkpoint-sqlite is not installed: pip install 'killpoint[langgraph]'",
)

from typer.testing import CliRunner

from killpoint.contract.errors import KillpointError
from killpoint.harness.campaign.execute import Campaign, CampaignConfig, run_in_tier
from killpoint.harness.catalogue import installed
from killpoint.harness.checkers import check_all
from killpoint.harness.cli import app
from killpoint.harness.engines import langgraph
from killpoint.harness.engines.registry import load_engine
from killpoint.harness.results import CampaignResult, RunResult, combine
from killpoint.harness.run.databases import create_schema, drop_schemas, with_schema
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule, HitPoint
from tests.support.frameworks import beside_the_time_finding

SCENARIOS = ("order_saga", "email", "batch", "expensive_reuse", "research_publish")
GATED = ("approval_refund", "handoff")


def _verdicts(run: RunResult) -> dict[str, object]:
    return {v.checker: v.valid for v in run.verdicts}


def test_the_registry_finds_both_variants_and_refuses_an_unknown_one() -> None:
    assert load_engine("langgraph").ref == "langgraph:keyed"
    naive = load_engine("langgraph:naive")
    assert naive.ref == naive.name == "langgraph:naive"
    assert {"budget", "fencing", "tenant", "ledger", "lease"} <= naive.lacks
    with pytest.raises(KillpointError, match="naive, keyed"):
        langgraph.spec("careless")


def test_naive_is_caught_double_charging_by_one_crash_and_the_file_alone_replays_it(
    tmp_path: Path,
) -> None:
    scenario = installed().scenarios["order_saga"]
    config = CampaignConfig(
        scenarios=[scenario], workdir=tmp_path / "out", engine=load_engine("langgraph:naive")
    )
    crash = HitPoint(worker=0, step="charge", boundary="transport.response_received")
    schedule = FaultSchedule(scenario="order_saga", run_id="one-crash", crashes=(crash,))
    with Campaign(config) as campaign:
        result, history = campaign.execute(scenario, schedule, "single")
    assert _verdicts(result)["single_effect"] is False
    assert history.workers[0].end == "killed"
    # nothing of the dead worker runs on: LangGraph's executor threads are gone with it
    assert not [t for t in threading.enumerate() if t.name.startswith("ThreadPoolExecutor")]
    charges = [a for a in history.applied if a.service == "payments"]
    assert len(charges) == 2  # LangGraph re-ran the node whose writes it never saved
    assert result.schedule_file is not None
    runner = CliRunner(env={"KILLPOINT_DATABASE_URL": None})
    replayed = runner.invoke(app, ["replay", result.schedule_file, "--workdir", str(tmp_path)])
    assert replayed.exit_code != 0
    assert "single_effect" in replayed.stdout


@pytest.fixture(scope="module")
def keyed_campaign(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CampaignResult]:
    config = CampaignConfig(
        scenarios=[installed().scenarios["order_saga"]],
        workdir=tmp_path_factory.mktemp("keyed"),
        engine=load_engine("langgraph:keyed"),
        interleave=False,
        explore="0",
    )
    with Campaign(config) as campaign:
        yield campaign.run()


def test_keyed_passes_every_single_and_double_crash_network_fault_and_named_case(
    keyed_campaign: CampaignResult,
) -> None:
    kinds = {r.kind for r in keyed_campaign.runs}
    assert {"clean", "single", "double", "network", "named"} <= kinds
    judged = beside_the_time_finding(keyed_campaign.runs)
    violated = [(r.label, v.checker) for r in judged for v in r.verdicts if v.valid is False]
    assert violated == []
    named = [r for r in judged if r.kind == "named"]
    assert named and all(_verdicts(r)["expected_recovery"] is not False for r in named)


def test_keyed_crashes_land_on_langgraph_s_own_checkpoint_writes(
    keyed_campaign: CampaignResult,
) -> None:
    crashed = {c for r in keyed_campaign.runs if r.kind == "single" for c in r.crashed_at}
    assert any("charge:checkpoint.built" in c for c in crashed)
    assert any("checkpoint.committed" in c for c in crashed)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    config = CampaignConfig(scenarios=[], workdir=tmp_path, engine=load_engine("langgraph:keyed"))
    with Campaign(config) as campaign:
        yield campaign.world


@pytest.mark.parametrize("name", SCENARIOS + GATED)
def test_a_catalogue_scenario_runs_clean_to_its_expected_status(world: World, name: str) -> None:
    scenario = installed().scenarios[name]
    engine = load_engine("langgraph:keyed")
    schedule = FaultSchedule(scenario=name, run_id="clean", engine=engine.ref)
    history = run_in_tier(world, scenario, schedule, engine)
    assert history.failures == []
    assert history.final_status == scenario.expected_status.value
    assert combine(check_all(history, scenario.workflow)) is not False


def test_the_reader_shows_langgraph_s_checkpoints_numbered_in_workflow_order(
    world: World,
) -> None:
    scenario = installed().scenarios["order_saga"]
    engine = load_engine("langgraph:keyed")
    schedule = FaultSchedule(scenario="order_saga", run_id="clean", engine=engine.ref)
    history = run_in_tier(world, scenario, schedule, engine)
    records = history.checkpoints
    assert [c.sequence for c in records] == list(range(1, len(records) + 1))
    states = [c.state for c in records]
    # the input checkpoint (step -1) and the one after START (step 0) both hold the start
    assert states[:2] == [scenario.workflow.initial] * 2
    expected = [scenario.workflow.initial]
    for transition in scenario.workflow.transitions:
        if transition.source == expected[-1]:
            expected.append(transition.target)
    assert list(dict.fromkeys(states)) == expected
    assert records[-1].status == "completed"
    assert all(a.created_at <= b.created_at for a, b in itertools.pairwise(records))
    reader = engine.history_reader(world.store, scenario)
    assert getattr(reader, "ledger", True) is False
    assert reader.effects(history.workflow_id) == []


def test_a_forked_worker_sigkilled_after_the_charge_recovers_on_the_same_saver(
    tmp_path: Path,
) -> None:
    scenario = installed().scenarios["order_saga"]
    engine = load_engine("langgraph:keyed")
    config = CampaignConfig(scenarios=[scenario], workdir=tmp_path, engine=engine, tier="real")
    crash = HitPoint(worker=0, step="charge", boundary="checkpoint.built")
    schedule = FaultSchedule(
        scenario="order_saga", run_id="sigkill", tier="real", engine=engine.ref, crashes=(crash,)
    )
    with Campaign(config) as campaign:
        history = run_in_tier(campaign.world, scenario, schedule, engine)
    first = history.workers[0]
    assert first.end == "sigkill" and "signal 9" in first.reason
    assert history.final_status == "completed"
    assert sum(1 for a in history.applied if a.service == "payments") == 1
    assert combine(check_all(history, scenario.workflow)) is not False


@pytest.fixture
def empty_store_url(database: tuple[str, str | None]) -> Iterator[str]:
    """The test's database with nothing in it (no reference store's tables either)."""
    url, schema = database
    if schema is None:
        yield url
        return
    create_schema(url, schema)
    try:
        yield with_schema(url, schema)
    finally:
        drop_schemas(url, [schema])


def test_on_either_backend_the_same_crash_doubles_naive_and_not_keyed(
    tmp_path: Path, empty_store_url: str
) -> None:
    """SqliteSaver on SQLite, PostgresSaver in the world's own schema on PostgreSQL."""
    scenario = installed().scenarios["order_saga"]
    crash = HitPoint(worker=0, step="charge", boundary="transport.response_received")
    charges = {}
    for variant in langgraph.VARIANTS:
        engine = load_engine(f"langgraph:{variant}")
        config = CampaignConfig(
            scenarios=[scenario],
            workdir=tmp_path / variant,
            engine=engine,
            store_url=empty_store_url,
        )
        schedule = FaultSchedule(scenario="order_saga", run_id=variant, crashes=(crash,))
        with Campaign(config) as campaign:
            result, history = campaign.execute(scenario, schedule, "single")
        assert history.final_status == "completed", [w.reason for w in history.workers]
        assert history.failures == []
        assert [c.sequence for c in history.checkpoints] == list(range(1, 8))
        charges[variant] = sum(1 for a in history.applied if a.service == "payments")
        assert _verdicts(result)["single_effect"] is (variant == "keyed")
    assert charges == {"naive": 2, "keyed": 1}
