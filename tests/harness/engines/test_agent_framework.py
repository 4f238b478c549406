"""Microsoft Agent Framework as an engine under test (`--engine agent-framework[:VARIANT]`).

The naive variant trusts the framework's superstep checkpoints and is caught repeating a charge
after one crash; the keyed variant survives every single crash, double crash and network fault
of `order_saga`; any catalogue scenario runs through the generic mapping; the history reader
reads the framework's own checkpoint files; and a forked worker SIGKILLed in the real tier
recovers the same way.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

# The imports after the needs below load the extra they check for, as importorskip's would.
# ruff: noqa: E402
from tests.support.needs import needs_module

needs_module("agent_framework", "needs the extra: pip install 'killpoint[agent-framework]'")

from typer.testing import CliRunner

from killpoint.contract.errors import KillpointError
from killpoint.harness.campaign.execute import Campaign, CampaignConfig, run_in_tier
from killpoint.harness.catalogue import installed
from killpoint.harness.checkers import check_all
from killpoint.harness.cli import app
from killpoint.harness.engines.registry import load_engine
from killpoint.harness.history import History
from killpoint.harness.results import CampaignResult, RunResult
from killpoint.harness.run.realtier import open_real_world
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule, HitPoint, Interleave, Tier
from tests.support.frameworks import beside_the_time_finding

NAIVE, KEYED = "agent-framework:naive", "agent-framework:keyed"
CHARGE_ANSWERED = HitPoint(worker=0, step="charge", boundary="transport.response_received")
CLEAN = ("order_saga", "email", "batch", "expensive_reuse", "approval_refund", "handoff")


def _campaign(root: Path, ref: str, *, faults: bool = True) -> CampaignResult:
    """order_saga's plan for `ref`, one worker at a time; without `faults`, single crashes only."""
    config = CampaignConfig(
        scenarios=[installed().scenarios["order_saga"]],
        workdir=root,
        engine=load_engine(ref),
        interleave=False,
        explore="0",  # the plan: every single, double and network fault, the named cases
        double=faults,
        network=faults,
        named=faults,
    )
    with Campaign(config) as running:
        return running.run()


def _false(run: RunResult) -> set[str]:
    return {v.checker for v in run.verdicts if v.valid is False}


def _run(world: World, scenario: str, ref: str, schedule: FaultSchedule) -> History:
    engine = load_engine(ref)
    world.begin_run(engine)
    return run_in_tier(world, installed().scenarios[scenario], schedule, engine)


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> CampaignResult:
    return _campaign(tmp_path_factory.mktemp("keyed"), KEYED)


def test_variants_are_named_and_an_unknown_one_is_refused() -> None:
    assert load_engine("agent-framework").ref == KEYED
    assert load_engine(NAIVE).name == NAIVE
    with pytest.raises(KillpointError, match="naive, keyed"):
        load_engine("agent-framework:careless")


def test_naive_repeats_a_charge_after_one_crash_and_its_schedule_replays_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _campaign(tmp_path / "naive", NAIVE, faults=False)
    run = next(
        r
        for r in result.runs
        if r.kind == "single"
        and [c.label() for c in r.schedule.crashes] == [CHARGE_ANSWERED.label()]
    )
    assert "single_effect" in _false(run)
    assert run.schedule_file is not None
    saved = json.loads(Path(run.schedule_file).read_text())
    assert (saved["engine"], len(saved["crashes"])) == (NAIVE, 1)
    monkeypatch.chdir(tmp_path)
    replayed = CliRunner().invoke(app, ["replay", run.schedule_file, "--workdir", "replay"])
    assert replayed.exit_code != 0
    assert "single_effect" in replayed.stdout


def test_keyed_survives_every_single_double_and_network_fault(keyed: CampaignResult) -> None:
    kinds = {r.kind for r in keyed.runs}
    assert {"clean", "single", "double", "network", "named"} <= kinds
    judged = beside_the_time_finding(keyed.runs)
    assert [(r.label, _false(r)) for r in judged if r.valid is False] == []
    assert all(r.final_status == "completed" for r in keyed.runs if r.kind == "clean")


def test_keyed_named_cases_that_do_not_fit_are_unknown_not_violated(
    keyed: CampaignResult,
) -> None:
    named = [r for r in beside_the_time_finding(keyed.runs) if r.kind == "named"]
    assert named and all(r.valid is not False for r in named)
    tampered = [r for r in named if r.schedule.tamper]
    recovery = {v.valid for r in tampered for v in r.verdicts if v.checker == "expected_recovery"}
    assert recovery == {"unknown"}  # the adapter has no tamper hook: nothing was staged


@pytest.mark.parametrize("scenario", CLEAN)
def test_a_catalogue_scenario_runs_clean_through_the_generic_mapping(
    tmp_path: Path, scenario: str
) -> None:
    expected = installed().scenarios[scenario].expected_status
    with World.open(tmp_path / scenario) as world:
        history = _run(world, scenario, KEYED, FaultSchedule(scenario=scenario, run_id="clean"))
    assert [w.status for w in history.workers] == [expected.value]
    assert [
        v.checker
        for v in check_all(history, installed().scenarios[scenario].workflow)
        if v.valid is False
    ] == []


def test_the_reader_numbers_the_framework_s_checkpoints_in_workflow_order(
    tmp_path: Path,
) -> None:
    with World.open(tmp_path / "read") as world:
        history = _run(world, "order_saga", KEYED, FaultSchedule(scenario="order_saga", run_id="r"))
    workflow = installed().scenarios["order_saga"].workflow
    order = [workflow.initial]
    while (transition := workflow.transition_from(order[-1])) is not None:
        order.append(transition.target)
    records = history.checkpoints
    assert [c.sequence for c in records] == list(range(1, len(records) + 1))
    assert [c.state for c in records] == order[: len(records)]
    assert records[-1].status == "completed" and all(c.size for c in records)


@pytest.fixture
def real_world(tmp_path: Path) -> Iterator[World]:
    with open_real_world(tmp_path / "real", None) as world:
        yield world


@pytest.mark.realtier
@pytest.mark.parametrize(("ref", "broken"), [(NAIVE, True), (KEYED, False)])
def test_a_sigkilled_forked_worker_recovers_from_the_framework_s_checkpoint(
    real_world: World, ref: str, broken: bool
) -> None:
    tier: Tier = "real"
    schedule = FaultSchedule(
        scenario="order_saga", run_id="sigkill", tier=tier, crashes=(CHARGE_ANSWERED,)
    )
    history = _run(real_world, "order_saga", ref, schedule)
    first, second = history.workers
    assert first.end == "sigkill" and second.status == "completed"
    verdicts = check_all(history, installed().scenarios["order_saga"].workflow)
    assert ("single_effect" in {v.checker for v in verdicts if v.valid is False}) is broken


def test_a_death_inside_an_executor_leaves_no_loop_or_thread_running(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    schedule = FaultSchedule(scenario="order_saga", run_id="die", crashes=(CHARGE_ANSWERED,))
    with World.open(tmp_path / "die") as world:
        history = _run(world, "order_saga", KEYED, schedule)
    assert [w.end for w in history.workers] == ["killed", "stopped"]
    left = [t.name for t in set(threading.enumerate()) - before if t.is_alive()]
    assert left == []  # the dead worker's event loop, its executor threads: all gone


def test_two_workers_on_one_checkpoint_show_as_a_fork_in_the_reader(tmp_path: Path) -> None:
    """Killed as `ship` begins, then two workers restore the same checkpoint at once: the
    framework lets both write a child of it, and the reader keeps both under one number."""
    crash = HitPoint(worker=0, step="ship", boundary="step.begin")
    pair = Interleave(after_worker=0, switch_at=(0, 2), pause_expires_lease=True)
    schedule = FaultSchedule(
        scenario="order_saga", run_id="pair", crashes=(crash,), interleave=pair
    )
    with World.open(tmp_path / "pair") as world:
        history = _run(world, "order_saga", KEYED, schedule)
    sequences = [c.sequence for c in history.checkpoints]
    assert len(sequences) > len(set(sequences))  # one number, two records: the fork
    verdicts = check_all(history, installed().scenarios["order_saga"].workflow)
    assert "monotonic_sequence" in {v.checker for v in verdicts if v.valid is False}
