"""The LangGraph.js example (`docs/examples/langgraph-ts`) as a command engine, end to end.

A TypeScript agent on LangGraph.js and its `SqliteSaver`, run by the harness as one process per
worker (`harness.engines.command`): the naive variant's saved one-crash schedule still charges
twice, the keyed variant passes every single crash, and the history command's records are
LangGraph's checkpoints in sequence. The example is built once per session (`npm ci`, then
`npm run build`); without node and npm the tests skip, and fail under CI.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.jobs import run_campaign
from killpoint.harness.catalogue import installed
from killpoint.harness.engines.command_history import parse_history
from killpoint.harness.engines.registry import load_engine
from killpoint.harness.history import History
from killpoint.harness.results import RunResult
from killpoint.harness.schedule import FaultSchedule, load_schedule
from tests.support.node_examples import EXAMPLE, langgraph_ts

__all__ = ["langgraph_ts"]  # the session fixture, used by name

ROOT = Path(__file__).parents[3]
SCHEDULE = ROOT / "docs" / "frameworks" / "schedules" / "langgraph-ts-naive-lost-charge.json"
# the windows where the naive variant repeats an effect: the keyed one must cross each
NAIVE_WINDOWS = {
    "w0 charge:transport.response_received",
    "w0 charge:checkpoint.built",
    "w0 ship:transport.response_received",
    "w0 ship:checkpoint.built",
}


def _run(engine: str, schedule: FaultSchedule, workdir: Path) -> tuple[RunResult, History]:
    """One schedule against one of the example's engine files, judged."""
    scenario = installed().scenario(schedule.scenario)
    config = CampaignConfig(scenarios=[scenario], workdir=workdir, engine=load_engine(engine))
    with Campaign(config) as campaign:
        return campaign.execute(scenario, schedule, "single")


def _verdicts(result: RunResult) -> dict[str, object]:
    return {v.checker: v.valid for v in result.verdicts}


@pytest.mark.usefixtures("langgraph_ts")
def test_the_saved_schedule_charges_the_naive_agent_twice_by_one_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the schedule names its engine file as `killpoint replay` is run
    schedule = load_schedule(SCHEDULE)
    assert schedule.engine == "docs/examples/langgraph-ts/naive.toml"
    assert len(schedule.crashes) == 1 and not schedule.network.rules
    result, history = _run(schedule.engine, schedule, tmp_path)
    assert _verdicts(result)["single_effect"] is False
    assert [w.end for w in history.workers] == ["killed", "stopped"]
    charges = [a for a in history.applied if a.operation == "create_charge"]
    assert len(charges) == 2  # LangGraph re-ran the node whose writes it never saved
    assert len({a.idempotency_key for a in charges}) == 2  # each with a key of its own


@pytest.mark.usefixtures("langgraph_ts")
def test_the_same_schedule_charges_the_keyed_agent_once(tmp_path: Path) -> None:
    schedule = load_schedule(SCHEDULE)
    result, history = _run(str(EXAMPLE / "keyed.toml"), schedule, tmp_path)
    assert [w.end for w in history.workers] == ["killed", "stopped"]
    assert [v.checker for v in result.verdicts if v.valid is False] == []
    assert len([a for a in history.applied if a.operation == "create_charge"]) == 1
    assert history.final_status == "completed"


@pytest.mark.usefixtures("langgraph_ts")
def test_keyed_passes_every_single_crash_of_the_order_saga(tmp_path: Path) -> None:
    config = CampaignConfig(
        scenarios=[installed().scenario("order_saga")],
        workdir=tmp_path,
        engine=load_engine(str(EXAMPLE / "keyed.toml")),
        double=False,
        interleave=False,
        network=False,
        named=False,
        deploys=False,
        explore="0",
        operators=False,
        lies=False,
        neighbours=False,
        pauses=False,
        real_pass=False,
    )
    result = run_campaign(config, jobs=2)
    singles = [r for r in result.runs if r.kind == "single"]
    assert {c for r in singles for c in r.crashed_at} >= NAIVE_WINDOWS
    violated = [(r.label, v.checker) for r in result.runs for v in r.verdicts if v.valid is False]
    assert violated == []
    assert {r.final_status for r in result.runs} == {"completed"}


@pytest.mark.usefixtures("langgraph_ts")
def test_the_history_command_prints_the_thread_s_checkpoints_in_sequence(tmp_path: Path) -> None:
    engine = str(EXAMPLE / "keyed.toml")
    clean = FaultSchedule(scenario="order_saga", run_id="clean")
    result, history = _run(engine, clean, tmp_path)
    assert result.final_status == "completed"
    environ = {
        **os.environ,
        "KILLPOINT_ACTION": "history",
        "KILLPOINT_WORKFLOW_ID": history.workflow_id,
        "KILLPOINT_WORKDIR": str(next(tmp_path.rglob("engine/langgraph.sqlite")).parent),
    }
    printed = subprocess.run(
        ["node", "dist/main.js", "history"],
        cwd=EXAMPLE,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    lines = [json.loads(line) for line in printed.splitlines()]
    assert lines and all(line["record"] == "checkpoint" for line in lines)
    records = parse_history(printed, "the example's history command").checkpoints
    assert records == history.checkpoints  # what the harness read through the engine file
    assert [c.sequence for c in records] == list(range(1, 8))
    states = ["received", "received", "order_validated", "charged", "charge_verified"]
    assert [c.state for c in records] == [*states, "shipped", "delivered"]
    assert [c.status for c in records] == ["running"] * 6 + ["completed"]
    times = [c.created_at for c in records]
    assert times == sorted(times) and times[0] > 0  # the world clock, not the wall's
    order = records[2].outputs["validate_order"]
    assert isinstance(order, dict) and (order["amount_cents"], order["currency"]) == (4_200, "EUR")
