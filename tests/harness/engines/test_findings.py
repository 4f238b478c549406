"""The findings in docs/frameworks.md replay: each minimal schedule saved there breaks its
framework's naive variant by itself (`killpoint replay FILE`), and the same schedule against
the keyed variant passes. A finding that no longer reproduces fails here, not in a reader's
hands."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from killpoint.harness.cli import app
from killpoint.harness.engines.registry import OWN, installed_engines
from killpoint.harness.schedule import save_schedule
from killpoint.scenarios import CATALOGUE
from tests.support.frameworks import NO_TIME_BUDGET
from tests.support.needs import needs_module

SCHEDULES = Path(__file__).parents[3] / "docs" / "frameworks" / "schedules"
PACKAGES = {"langgraph": "langgraph", "agent-framework": "agent_framework", "dbos": "dbos",
            "temporal": "temporalio"}  # fmt: skip


# killpoint's own framework adapters, as its entry points register them
FRAMEWORKS = sorted(n for n, p in installed_engines().items() if p.dist and p.dist.name == OWN)


def _files() -> list[Path]:
    """The adapters' schedules; an engine file's (the LangGraph.js example's, the MCP agent's)
    is replayed by a test of its own."""
    return sorted(p for p in SCHEDULES.glob("*.json") if _engine(p).partition(":")[0] in FRAMEWORKS)


def _engine(path: Path) -> str:
    engine: str = json.loads(path.read_text())["engine"]
    return engine


def _replay(path: Path, tmp_path: Path, *more: str) -> tuple[int, str]:
    framework = _engine(path).partition(":")[0]
    needs_module(PACKAGES[framework], f"the {framework} extra is not installed")
    result = CliRunner(env={"KILLPOINT_DATABASE_URL": None}).invoke(
        app, ["replay", str(path), "--workdir", str(tmp_path), *more], catch_exceptions=False
    )
    return result.exit_code, result.stdout


def test_every_framework_has_a_saved_minimal_schedule() -> None:
    assert {_engine(p) for p in _files()} == {f"{name}:naive" for name in FRAMEWORKS}


@pytest.mark.usefixtures("dbos_logs_to_real_stderr")
@pytest.mark.parametrize("path", _files(), ids=lambda p: p.stem)
def test_the_saved_schedule_breaks_the_naive_variant_by_itself(path: Path, tmp_path: Path) -> None:
    schedule = json.loads(path.read_text())
    assert len(schedule["crashes"]) == 1 and not schedule["network"]["rules"]  # one crash only
    code, out = _replay(path, tmp_path)
    assert code == 1
    assert re.search(
        r"single_effect +VIOLATION payments\.create_charge .* took effect 2 times", out
    )


@pytest.mark.usefixtures("dbos_logs_to_real_stderr")
@pytest.mark.parametrize("path", _files(), ids=lambda p: p.stem)
def test_the_same_schedule_passes_the_keyed_variant(path: Path, tmp_path: Path) -> None:
    keyed = _engine(path).replace(":naive", ":keyed")
    code, out = _replay(path, tmp_path, "--engine", keyed)
    assert code == 0, out
    assert not re.search(r"VIOLATION", out)


@pytest.mark.usefixtures("dbos_logs_to_real_stderr")
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_every_keyed_variant_ships_past_a_time_budget_it_does_not_keep(
    framework: str, tmp_path: Path
) -> None:
    """Down two days mid-run, every keyed variant ships a day past the run's time budget: no
    framework carries the budget across a restart (the adapters say they lack "budget"), and
    the journal shows the late send whatever the engine keeps (`deadline_kept`)."""
    case = CATALOGUE["order_saga"].case(NO_TIME_BUDGET)
    assert case is not None
    path = tmp_path / "time.json"
    save_schedule(case.schedule.model_copy(update={"engine": f"{framework}:keyed"}), path)
    code, out = _replay(path, tmp_path / "replay")
    assert code == 1
    assert re.search(r"deadline_kept +VIOLATION .*after the run's deadline", out), out
    assert not re.search(r"(single_effect|expected_recovery) +VIOLATION", out), out
