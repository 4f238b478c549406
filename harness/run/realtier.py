"""The real-death tier: each worker is a forked OS process that the kill-switch `SIGKILL`s.

The parent warms up once (imports, store schema, a running service process) and forks one
child per worker, which is about a hundred times cheaper than a fresh interpreter. A child
builds its engine from scratch against the same SQLite file or PostgreSQL and talks to the fake
services over real HTTP on loopback. Its boundary hits go to an append-only file written with
one `os.write` per hit, so they survive the kill; its result, if it lives to have one, goes to
another file. The parent checks the exit status (killed by signal 9), applies the schedule's
between-worker events and forks the next worker. Only the clock (and a pair's baton) is shared.
"""

from __future__ import annotations

import gc
import json
import multiprocessing
import os
import signal
import time
import traceback
from pathlib import Path
from typing import Any, Literal

import httpx

from killpoint.contract.errors import KillpointError
from killpoint.fake_services import FaultInjectingTransport, FaultPlan, Journal, ServiceProcess
from killpoint.harness.history import GrantRecord, History, HitRecord, WorkerRecord
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.run.db_loss import await_database, database_fault
from killpoint.harness.run.forked import Standby, wait_all
from killpoint.harness.run.interleave import Baton
from killpoint.harness.run.killswitch import Death, Hit, Killed
from killpoint.harness.run.runner import Run
from killpoint.harness.run.world import EPOCH, World, store_for
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule

End = Literal["stopped", "sigkill", "killed", "error", "hung"]  # how a forked worker can end


class SharedMemoryClock:
    """One clock for the parent and every forked worker: a double in anonymous shared memory."""

    def __init__(self, start: float = EPOCH) -> None:
        self._value = multiprocessing.RawValue("d", start)

    def now(self) -> float:
        return float(self._value.value)

    def set(self, t: float) -> None:
        self._value.value = t

    def sleep(self, seconds: float) -> None:
        self.advance(seconds)

    def advance(self, seconds: float) -> None:
        self._value.value += seconds


class RealServices:
    """A fake-services server process, seen through the same interface as the in-process one."""

    def __init__(self, journal_path: Path, clock: SharedMemoryClock) -> None:
        self.process = ServiceProcess(journal_path).start()
        self.clock = clock

    @property
    def journal(self) -> Journal:
        return self.process.journal

    @property
    def base_url(self) -> str:
        return self.process.base_url

    def transport(self, *, faults: bool = True) -> httpx.BaseTransport:
        """A worker's transport: every request carries the shared clock's reading, so the
        server sees the worker's time, and none asks for a fault decision when there is no
        plan to decide by (or `faults` is False: a neighbour's, which no rule counts)."""
        planned = faults and bool(self.process.plan.rules)
        return FaultInjectingTransport(planned=planned, clock=self.clock.now)

    def reset(self) -> None:
        self.process.reset()

    def set_plan(self, plan: FaultPlan) -> None:
        self.process.set_plan(plan)

    def close(self) -> None:
        self.process.stop()


def open_real_world(workdir: str | Path, store_url: str | None = None) -> World:
    root = Path(workdir)
    root.mkdir(parents=True, exist_ok=True)
    clock = SharedMemoryClock()
    return World(
        store=store_for(root, store_url),
        services=RealServices(root / "journal.sqlite", clock),
        clock=clock,
        store_url=store_url,
        root=root,
    )


class RealRun(Run):
    """A `Run` whose workers are forked processes that die by SIGKILL.

    A worker that is scheduled to die has its successor forked as soon as it starts: the
    successor sets up (its store connection, journal, engine and HTTP client) on the other core
    and waits on a pipe for its turn, so a crash-recover cycle does not wait for it."""

    death: Death = "sigkill"

    _hits_fd: int | None = None
    _grants_fd: int | None = None
    _journal: Journal | None = None
    _standby: dict[int, Standby]  # workers forked ahead, set up and waiting for their turn
    _forks: int  # workers forked in this run, to name their files
    _started: Path | None = None  # in a worker: the file that says its start() returned

    def delivered(self) -> None:
        """The start message was taken, as a queue's ack says: made durable at once, so a
        death right after it does not have the message delivered again (nor one before it
        lose it), the same in both tiers."""
        if self._started is not None:
            self._started.touch()

    def record_grant(self, grant: GrantRecord) -> None:
        if self._grants_fd is None:
            super().record_grant(grant)
        else:  # written as it happens: the worker may be killed right after granting
            os.write(self._grants_fd, (grant.model_dump_json() + "\n").encode())

    def record(self, hit: Hit) -> None:
        if self._hits_fd is None:  # the parent records nothing itself
            super().record(hit)
            return
        assert self._journal is not None
        line = HitRecord(
            worker=hit.worker,
            step=hit.step,
            boundary=hit.boundary,
            occurrence=hit.occurrence,
            time=hit.time,
            journal_seq=self._journal.last_seq(),
        )
        os.write(self._hits_fd, (line.model_dump_json() + "\n").encode())

    def execute(self) -> History:
        self._standby, self._forks = {}, 0
        try:
            return super().execute()
        finally:
            for standby in self._standby.values():  # one the run ended without needing
                standby.dismiss()

    def run_worker(self, worker: int, hook_wrap: Any = None) -> WorkerRecord:
        if hook_wrap is not None:
            raise KillpointError("a worker process takes its pair's hook when it is forked")
        standby = self._standby.pop(worker, None) or self._fork(worker)
        started_at, wall = self.world.clock.now(), time.perf_counter()
        standby.go(self.started and not self.restart)  # a redelivery sends it again
        if self.schedule.crash_in(worker) and worker + 1 < self.schedule.max_workers:
            # this one is to die, so the next is needed: it sets up while this one runs
            self._standby[worker + 1] = self._fork(worker + 1)
        status = standby.wait(self.world.worker_timeout_s)
        return self._ended(worker, standby, status, started_at, wall)

    def run_pair(self, first: int, switch_at: tuple[int, ...], expire: bool) -> list[WorkerRecord]:
        """Two worker processes recover at once, taking turns at boundary hits on a baton in
        shared memory; their hits go to one file, in the order they happened. A worker that
        dies (SIGKILL) hands the turn over: the parent finishes its slot."""
        for worker in (first, first + 1):  # forked ahead without the baton: not these
            standby = self._standby.pop(worker, None)
            if standby is not None:
                standby.dismiss()
        advance = self.world.clock.advance if expire else None
        baton = Baton.across_processes(set(switch_at), advance, self.world.lease_ttl + 1)
        hits = self.world.workdir / "workers" / f"pair-{first}.jsonl"
        pair = [self._fork(first + slot, (baton, slot, hits)) for slot in (0, 1)]
        started_at, wall = self.world.clock.now(), time.perf_counter()
        for standby in pair:
            standby.go(self.started and not self.restart)
        statuses = wait_all(pair, self.world.worker_timeout_s, baton.finish)
        self.hits.extend(_read_hits(hits))
        return [
            self._ended(first + slot, standby, statuses[slot], started_at, wall, hits=False)
            for slot, standby in enumerate(pair)
        ]

    def _ended(
        self,
        worker: int,
        standby: Standby,
        status: int | None,
        started_at: float,
        wall: float,
        *,
        hits: bool = True,
    ) -> WorkerRecord:
        versions = self.versions_for(worker)
        seen, result = self._collect(standby, hits)
        self.controls[:] = result.pop("controls", self.controls)
        if "failure" in result:
            error, trace = result.pop("failure")
            result["error"] = self.keep_failure(f"worker {worker}", error, trace)
        if not hits:
            seen = [h for h in self.hits if h.worker == worker]
        end, reason = _ending(status, seen, result, self.world.worker_timeout_s)
        if end == "killed":  # by its database: the next worker waits until it answers
            await_database(self.world.store.url)
        record = WorkerRecord(
            worker=worker,
            owner=f"worker-{worker}",
            plan_version=versions.plan,
            prompt_version=versions.prompt,
            versions=versions,
            end=end,
            status=result.get("status"),
            state=result.get("state"),
            sequence=result.get("sequence"),
            reason=reason,
            hits=len(seen),
            started_at=started_at,
            ended_at=self.world.clock.now(),
            journal_seq_end=self.world.services.journal.last_seq(),
            wall_s=time.perf_counter() - wall,
        )
        if standby.started.exists():  # its start() returned: the message was taken
            self.started, self.restart = True, False
        return self.ended(record)

    def _collect(
        self, standby: Standby, with_hits: bool = True
    ) -> tuple[list[HitRecord], dict[str, Any]]:
        """What an ended worker left in its files: its hits and grants (kept in the run), and
        its result, if it lived to write one."""
        hits_path, result_path, grants_path = standby.paths
        hits = _read_hits(hits_path) if with_hits else []
        self.hits.extend(hits)
        if grants_path.exists():
            self.grants.extend(
                GrantRecord.model_validate_json(line)
                for line in grants_path.read_text().splitlines()
                if line
            )
        result: dict[str, Any] = {}
        if result_path.exists():
            result = json.loads(result_path.read_text())
        return hits, result

    def _fork(self, worker: int, pair: tuple[Baton, int, Path] | None = None) -> Standby:
        """A worker process, set up (store, journal, engine, client) and waiting for its go;
        one of a pair takes its turns on the pair's baton and writes to the pair's hits."""
        workers = self.world.workdir / "workers"  # emptied, not removed, before each run
        workers.mkdir(exist_ok=True)
        self._forks += 1  # files, not a folder, of its own (`run.folders`: folders cost)
        stem = f"w{worker}-{self._forks}"
        hits = workers / f"{stem}.hits.jsonl" if pair is None else pair[2]
        paths = (hits, workers / f"{stem}.result.json", workers / f"{stem}.grants.jsonl")
        started = workers / f"{stem}.started"
        if self.engine.prepare is not None:  # open (and warm) what the children inherit
            self.engine.prepare(self.world.store)
        go_read, go_write = os.pipe()
        gc.freeze()  # the child's collector leaves the inherited heap alone: no copy-on-write
        pid = os.fork()
        if pid == 0:  # the worker
            os.close(go_write)
            self._started = started
            self._child(worker, *paths, go_read, pair)
        gc.unfreeze()
        os.close(go_read)
        return Standby(pid, paths, go_write, started)

    def _child(
        self,
        worker: int,
        hits_path: Path,
        result_path: Path,
        grants_path: Path,
        go: int,
        pair: tuple[Baton, int, Path] | None = None,
    ) -> None:
        """The body of a forked worker. It never returns: it exits or is killed."""
        code = 0
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
            self._hits_fd = os.open(hits_path, flags, 0o600)
            self._grants_fd = os.open(grants_path, flags, 0o600)
            self._journal = Journal.open(self.world.services.journal.path)
            # what the engine's adapter opened in the parent, without its open connections
            self.world.store.shared.after_fork()
            result: dict[str, Any]
            baton, slot = (None, 0) if pair is None else pair[:2]
            try:
                wrap = None if baton is None else (lambda s: baton.hook(slot, s))
                engine, http, _ = self.build(worker, wrap)
                order = os.read(go, 1)  # set up; now wait until the worker before has ended
                if order not in (b"0", b"1"):
                    os._exit(0)  # dismissed: the run ended without this worker
                self.started = order == b"1"
                if baton is not None:
                    baton.wait_turn(slot)
                with http:
                    status, state, reason, sequence = self.drive(engine, worker)
                result = {"status": status, "state": state, "reason": reason, "sequence": sequence}
                result["controls"] = self.controls  # what its operator did (`harness.operator`)
            except Killed as killed:  # a raising switch would be a harness bug here
                result = {"error": f"unexpected in-process death {killed}"}
            except KillpointError as exc:
                result = {"error": f"{type(exc).__name__}: {exc}"}
            except (Exception, SystemExit) as exc:
                fault = database_fault(exc)
                if fault is not None:  # it died of its database, as in process (`db_loss`)
                    result = {"died": f"{fault}: {type(exc).__name__}"}
                else:  # the engine's own, for the parent to keep
                    error = f"{type(exc).__name__}: {exc}"
                    result = {"failure": [error, traceback.format_exc()]}
            result_path.write_text(json.dumps(result))
            if baton is not None:
                baton.finish(slot)
        except BaseException:
            code = 70
        finally:
            os._exit(code)


def _read_hits(path: Path) -> list[HitRecord]:
    lines = path.read_text().splitlines() if path.exists() else []
    return [HitRecord.model_validate_json(x) for x in lines if x.strip()]


def _ending(
    status: int | None, hits: list[HitRecord], result: dict[str, Any], timeout: float
) -> tuple[End, str]:
    """How a worker process ended, from its exit status and the result it wrote (no status:
    it ran past its timeout and the harness killed it)."""
    if status is None:
        where = hits[-1].label() if hits else "before its first boundary"
        return "hung", f"no end after {timeout:g} s; last hit {where}"
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
        return "sigkill", f"killed by signal 9 at {hits[-1].label() if hits else '?'}"
    if "died" in result:
        return "killed", str(result["died"])
    if "error" in result:
        return "error", str(result["error"])
    if "status" in result:
        return "stopped", str(result.get("reason", ""))
    if os.WIFSIGNALED(status):  # the engine's own crash (a SIGSEGV in a native library, say)
        dead = signal.Signals(os.WTERMSIG(status))
        return "error", f"worker died of signal {dead.value} ({dead.name}) with no result"
    return "error", f"worker exited with status {os.waitstatus_to_exitcode(status)} and no result"


def run_schedule_real(
    world: World, scenario: Scenario, schedule: FaultSchedule, engine: EngineSpec
) -> History:
    """Run one schedule with forked, SIGKILLed workers against real HTTP services."""
    world.begin_run(engine)
    world.services.set_plan(schedule.network.seeded(schedule.run_id))
    return RealRun(world, scenario, schedule, engine).execute()
