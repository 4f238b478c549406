"""Database faults under a run: the store's connection cut before each write statement in turn,
its SQLite file locked by another process past the busy timeout, or deleted. A worker that
fails on its database died; the next one resumes, and nothing is lost or repeated. A store that
cannot come back (a lock held for good, a file gone) stops the campaign with one line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from killpoint.harness.campaign import execute as campaign
from killpoint.harness.campaign.execute import run_in_tier
from killpoint.harness.checkers import check_all
from killpoint.harness.cli import app
from killpoint.harness.engines.reference import REFERENCE, open_store
from killpoint.harness.history import History
from killpoint.harness.protocol import EngineSpec, EngineUnderTest, WorkerEnv
from killpoint.harness.run import db_loss
from killpoint.harness.run.databases import drop_scratch, dropped
from killpoint.harness.run.realtier import open_real_world, run_schedule_real
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule, HitPoint
from killpoint.reference.store import Store
from killpoint.scenarios import CATALOGUE
from tests.support.db_faults import LockAt, SeverAt, StatementFault, VanishAt
from tests.support.fixtures import TEST_KEY
from tests.support.private_postgres import private_postgres

SCENARIO = CATALOGUE["order_saga"]
KILLPOINT = str(Path(sys.executable).with_name("killpoint"))
CUTS = range(1, 40, 3)  # every third write of the first worker's run, the effect protocol's too


def _arming(fault: StatementFault) -> EngineSpec:
    """The reference engine, with the fault armed in the first worker alone (not in the world's
    own clearing of the store between runs, nor in a forked successor's copy of it)."""

    def factory(env: WorkerEnv, scenario: Scenario) -> EngineUnderTest:
        fault.armed = env.owner == "worker-0"
        return REFERENCE.factory(env, scenario)

    return replace(REFERENCE, factory=factory)


def test_a_driver_error_subclass_that_says_the_connection_ended_is_a_database_fault() -> None:
    """psycopg raises `AdminShutdown` (an `OperationalError`) at a worker whose backend the
    server terminated during a restart: that worker died, the engine did not fail."""

    class OperationalError(Exception):
        pass

    class AdminShutdown(OperationalError):
        pass

    said = "terminating connection due to administrator command"
    assert db_loss.database_fault(AdminShutdown(said)) == db_loss.LOST
    assert db_loss.database_fault(AdminShutdown("duplicate key value")) is None


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
            try:
                with cut:
                    history = run_schedule(world, SCENARIO, schedule, _arming(cut))
            finally:
                drop_scratch(url, world.store.url)  # the world's own schema, not the test's
            if cut.at is None:
                break  # the run wrote fewer than n statements: every cut was tried
            cut_at.append(cut.at)
            verdicts = {v.checker: v for v in check_all(history, SCENARIO.workflow)}
            broken = {c: v.evidence for c, v in verdicts.items() if v.valid is False}
            assert broken == {}, f"cut before write {n} ({cut.at})"
            assert history.final_status == "completed", f"cut before write {n}"
            first = history.workers[0]  # a death of its own kind, not the engine's failure
            assert first.end == "killed" and "database connection lost" in first.reason
    assert len(cut_at) >= 5 and any(s.startswith("INSERT") for s in cut_at), cut_at


def test_a_thread_whose_connection_was_cut_opens_a_new_one(store: Store) -> None:
    with SeverAt(store.db, 1) as cut, pytest.raises(DBAPIError):
        store.clear()
    assert cut.at is not None
    store.clear()  # the same thread: a new connection, not the dead one again


def _broken(history: History) -> dict[str, list[str]]:
    verdicts = check_all(history, SCENARIO.workflow)
    return {v.checker: v.evidence for v in verdicts if v.valid is False}


def _busy(folder: Path) -> str:
    """A SQLite store whose busy timeout (0.2 s, in its URL) a held lock soon outlasts."""
    return f"sqlite:///{folder / 'store.sqlite'}?timeout=0.2"


def test_a_busy_timeout_in_the_url_is_how_long_a_writer_waits_for_a_lock(tmp_path: Path) -> None:
    with Store(_busy(tmp_path)) as store, LockAt(store.db, 1, hold_s=30):
        began = time.monotonic()
        with pytest.raises(DBAPIError, match="database is locked"):
            store.clear()
    assert time.monotonic() - began < 5  # not the default 30 s


@pytest.mark.parametrize("n", [1, 9])
def test_a_store_locked_past_its_busy_timeout_is_a_death_and_the_next_worker_resumes(
    n: int, tmp_path: Path, checkpoint_key: bytes
) -> None:
    with World.open(tmp_path, _busy(tmp_path)) as world:
        lock = LockAt(open_store(world.store).db, n, armed=False, hold_s=0.6)
        schedule = FaultSchedule(scenario=SCENARIO.name, run_id=f"lock-{n}", max_workers=4)
        with lock:
            history = run_schedule(world, SCENARIO, schedule, _arming(lock))
    assert lock.at is not None
    assert _broken(history) == {} and history.final_status == "completed"
    first = history.workers[0]  # a death of its own kind, not the engine's failure
    assert first.end == "killed" and "database locked" in first.reason, first


def test_a_store_locked_for_good_stops_the_run_with_one_line(
    tmp_path: Path, checkpoint_key: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(db_loss, "PATIENCE_S", 1.0)
    with World.open(tmp_path, _busy(tmp_path)) as world:
        lock = LockAt(open_store(world.store).db, 3, armed=False, hold_s=60)
        schedule = FaultSchedule(scenario=SCENARIO.name, run_id="locked", max_workers=4)
        with lock, pytest.raises(db_loss.DatabaseUnavailable) as stop:
            run_schedule(world, SCENARIO, schedule, _arming(lock))
    assert "stayed locked by another process" in str(stop.value)
    assert "\n" not in str(stop.value)


@pytest.mark.parametrize("n", [1, 6, 20])
def test_a_store_file_deleted_under_a_run_stops_it_and_is_never_made_anew(
    n: int, tmp_path: Path, checkpoint_key: bytes
) -> None:
    with World.open(tmp_path) as world:
        vanish = VanishAt(open_store(world.store).db, n, armed=False)
        schedule = FaultSchedule(scenario=SCENARIO.name, run_id=f"gone-{n}", max_workers=4)
        with vanish, pytest.raises(db_loss.DatabaseUnavailable, match="was deleted"):
            run_schedule(world, SCENARIO, schedule, _arming(vanish))
        assert vanish.at is not None
        assert not vanish.path.exists()  # no empty store in its place


def test_a_store_file_replaced_by_another_is_a_stop(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    path.write_bytes(b"")
    watch = db_loss.StoreFile(f"sqlite:///{path}")
    watch.check()  # first seen
    watch.check()
    shutil.copy(path, tmp_path / "copy")
    os.replace(tmp_path / "copy", path)  # the same bytes, another file
    with pytest.raises(db_loss.DatabaseUnavailable, match="was replaced by another file"):
        watch.check()


@pytest.mark.realtier
@pytest.mark.parametrize("n", [2])
def test_a_store_file_deleted_under_a_forked_worker_stops_the_run_before_the_next_one(
    n: int, tmp_path: Path, checkpoint_key: bytes
) -> None:
    crash = HitPoint(worker=0, step="charge", boundary="effect.receipt_committed")
    with open_real_world(tmp_path) as world:
        vanish = VanishAt(open_store(world.store).db, n, armed=False)
        schedule = FaultSchedule(
            scenario=SCENARIO.name, run_id=f"gone-{n}", tier="real", crashes=(crash,)
        )
        with vanish, pytest.raises(db_loss.DatabaseUnavailable, match="was deleted"):
            run_schedule_real(world, SCENARIO, schedule, _arming(vanish))
        assert not vanish.path.exists()  # no worker made an empty store in its place


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_campaign_whose_store_file_is_deleted_stops_with_one_line(
    jobs: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The file goes between two runs of a campaign (of each of its processes): the next run
    does not start over on an empty store; the campaign ends with one line and exit 2."""
    ran: list[Path] = []

    def deleting(world: World, *args: Any) -> History:
        path = Path(str(make_url(world.store.url).database))
        ran.append(path)
        if len(ran) == 3:
            for suffix in ("", "-wal", "-shm"):
                path.with_name(path.name + suffix).unlink(missing_ok=True)
        return run_in_tier(world, *args)

    monkeypatch.setattr(campaign, "run_in_tier", deleting)
    monkeypatch.setenv("KILLPOINT_CHECKPOINT_KEY", TEST_KEY)
    with pytest.raises(SystemExit) as done:  # the console's own streams: forked jobs' too
        app(["run", "-s", "email", "--workdir", str(tmp_path / "out"), "--jobs", jobs])
    output = capfd.readouterr()
    assert done.value.code == 2, output
    assert "Traceback" not in output.out + output.err
    (line,) = [x for x in output.err.splitlines() if "was deleted" in x]
    assert line.startswith("killpoint: ") and "the store file" in line
    if jobs == "1":
        assert len(ran) == 3 and not ran[-1].exists()


@pytest.mark.realtier
@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_a_forked_worker_whose_connection_was_cut_died_and_the_next_one_resumes(
    backend: str, tmp_path: Path, checkpoint_key: bytes, request: pytest.FixtureRequest
) -> None:
    """The real tier judges a lost connection as the in-process tier does: the worker process
    died (not the engine's failure); the next one, itself SIGKILLed, and the one after resume."""
    url = None if backend == "sqlite" else request.getfixturevalue("postgres_url")
    crash = HitPoint(worker=1, step=None, boundary="lease.acquired")
    with open_real_world(tmp_path, url) as world, dropped(url, world.store.url):
        for n in (2, 17):
            cut = SeverAt(open_store(world.store).db, n, armed=False)
            schedule = FaultSchedule(
                scenario=SCENARIO.name, run_id=f"cut-{n}", tier="real", crashes=(crash,)
            )
            with cut:
                history = run_schedule_real(world, SCENARIO, schedule, _arming(cut))
            assert _broken(history) == {}, f"cut before write {n}"
            assert history.final_status == "completed", f"cut before write {n}"
            first, second = history.workers[:2]
            assert first.end == "killed" and "database connection lost" in first.reason, first
            assert second.end == "sigkill", second


@pytest.mark.postgres
def test_a_campaign_survives_its_postgres_restarting_under_it(tmp_path: Path) -> None:
    """The server restarts mid-campaign: the workers it cut die and the next ones resume; the
    campaign ends with nothing violated, or (when it cannot go on) one line, not a traceback."""
    with private_postgres() as server:
        command = [KILLPOINT, "run", "-s", "order_saga", "--db", server.url]
        command += ["--no-interleave", "--explore", "0", "--double-limit", "80"]  # ~15 s
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
