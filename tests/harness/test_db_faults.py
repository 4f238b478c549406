"""A store connection cut mid-transaction, before each write statement of a run in turn: the
worker fails on the dead connection, the next worker resumes, and nothing is lost or repeated."""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from killpoint.harness.checkers import check_all
from killpoint.harness.db_faults import SeverAt
from killpoint.harness.engine.store import Store
from killpoint.harness.engines.reference import REFERENCE, open_store
from killpoint.harness.protocol import EngineSpec, EngineUnderTest, WorkerEnv
from killpoint.harness.runner import run_schedule
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule
from killpoint.harness.world import World
from killpoint.scenarios import CATALOGUE
from tests.harness.private_postgres import private_postgres

SCENARIO = CATALOGUE["order_saga"]
KILLPOINT = str(Path(sys.executable).with_name("killpoint"))
CUTS = range(1, 40, 3)  # every third write of the first worker's run, the effect protocol's too


def _arming(cut: SeverAt) -> EngineSpec:
    """The reference engine, with the cut armed once the first worker is built (the world's
    own clearing of the store between runs is not the worker's)."""

    def factory(env: WorkerEnv, scenario: Scenario) -> EngineUnderTest:
        cut.armed = True
        return REFERENCE.factory(env, scenario)

    return replace(REFERENCE, factory=factory)


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_a_connection_cut_before_any_write_loses_and_repeats_nothing(
    backend: str, tmp_path: Path, checkpoint_key: bytes, request: pytest.FixtureRequest
) -> None:
    url = None if backend == "sqlite" else request.getfixturevalue("postgres_url")
    cut_at: list[str] = []
    for n in CUTS:
        with World.open(tmp_path / f"cut-{n}", url) as world:
            cut = SeverAt(open_store(world.store).db, n, armed=False)
            schedule = FaultSchedule(scenario=SCENARIO.name, run_id=f"cut-{n}", max_workers=4)
            with cut:
                history = run_schedule(world, SCENARIO, schedule, _arming(cut))
            if cut.severed is None:
                break  # the run wrote fewer than n statements: every cut was tried
            cut_at.append(cut.severed)
            verdicts = {v.checker: v for v in check_all(history, SCENARIO.workflow)}
            broken = {c: v.evidence for c, v in verdicts.items() if v.valid is False}
            assert broken == {}, f"cut before write {n} ({cut.severed})"
            assert history.final_status == "completed", f"cut before write {n}"
            first = history.workers[0]  # a death of its own kind, not the engine's failure
            assert first.end == "killed" and "database connection lost" in first.reason
    assert len(cut_at) >= 5 and any(s.startswith("INSERT") for s in cut_at), cut_at


def test_a_thread_whose_connection_was_cut_opens_a_new_one(store: Store) -> None:
    with SeverAt(store.db, 1) as cut, pytest.raises(DBAPIError):
        store.clear()
    assert cut.severed is not None
    store.clear()  # the same thread: a new connection, not the dead one again


@pytest.mark.postgres
def test_a_campaign_survives_its_postgres_restarting_under_it(tmp_path: Path) -> None:
    """The server restarts mid-campaign: the workers it cut die and the next ones resume; the
    campaign ends with nothing violated, or (when it cannot go on) one line, not a traceback."""
    with private_postgres() as server:
        command = [KILLPOINT, "run", "-s", "order_saga", "--db", server.url]
        campaign = subprocess.Popen(
            [*command, "--workdir", str(tmp_path / "out")],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        while "kp_" not in _schemas(server.url) and campaign.poll() is None:
            time.sleep(0.1)  # the campaign has begun writing
        time.sleep(2.0)
        assert campaign.poll() is None, "the campaign ended before the restart"
        server.ctl("restart")
        output, _ = campaign.communicate(timeout=300)
    assert campaign.returncode == 0, output
    assert "Traceback" not in output and " 0 violating" in output, output


def _schemas(url: str) -> str:
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            return " ".join(conn.execute(text("SELECT nspname FROM pg_namespace")).scalars())
    finally:
        engine.dispose()
