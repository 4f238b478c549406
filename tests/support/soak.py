"""A concurrency soak: N forked workers race over M workflows on one store, killed at random.

The reference engine's test tooling, outside the wheel: it judges the reference store's own
record of its writes (`soak_writes`), which no other engine keeps (`tests/reference/test_soak.py`,
`benchmarks/soak.py`).

Workers pick unfinished workflows at random and resume them on the wall clock with a short
lease TTL, so leases lapse under their holders and other workers take over, live holders too
(`soak_pauses`: random stalls, and holders paused at a commit until overtaken); the parent
SIGKILLs a random worker now and then and forks a new one. It ends by itself (all settled, or
the time is up). Then it judges only from the durable records: the store's checkpoints (one lineage,
sequences 1..n), the store's own record of its writes in order (none under a superseded fencing
token, no checkpoint written over: `soak_writes`), the services' journal (one applied effect per
business key) and each workflow's status (terminal, or stopped with a reason). Refusals a worker
met (lost compare-and-swap, stale fence, a lease held) are counted by the workers themselves,
one `os.write` per refusal, so the engine is not slowed by counting.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, text

from killpoint.contract.boundaries import BoundaryHook, no_hook
from killpoint.contract.clock import SystemClock
from killpoint.contract.errors import KillpointError
from killpoint.fake_services import FaultInjectingTransport, ServiceProcess
from killpoint.harness.protocol import EngineSpec, StoreHandle, WorkerEnv
from killpoint.harness.run.databases import drop_scratch
from killpoint.harness.run.world import BASE_VERSIONS, store_for
from killpoint.harness.scenario import Scenario
from tests.support.soak_pauses import OVERTAKEN, Pauses, waiting
from tests.support.soak_writes import judge_writes, record_writes, recorded_writes

SETTLED = (
    "completed",
    "failed",
    "compensated",
    "quarantined",
    "needs_review",
    "budget_exhausted",
    "dead_lettered",  # delivered too often without ending: stopped for a person, with its reason
)


@dataclass
class SoakResult:
    workflows: int
    seconds: float
    transitions: int
    kills: int
    refusals: Counter[str]
    overtaken: int  # holders paused at a commit until another took their workflow over
    takeovers: int
    acquisitions: int
    forks: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    unsettled: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.forks or self.stale or self.duplicates or self.unsettled)

    def lines(self) -> list[str]:
        rate = self.transitions / self.seconds if self.seconds else 0.0
        return [
            f"workflows {self.workflows}, {self.seconds:.1f} s, {self.kills} SIGKILLs",
            f"transitions {self.transitions} ({rate:.1f}/s)",
            f"lease acquisitions {self.acquisitions}, takeovers {self.takeovers} "
            f"({self.overtaken} of a holder paused at a commit)",
            "refusals " + (", ".join(f"{k} {v}" for k, v in sorted(self.refusals.items())) or "0"),
            f"forked lineages {len(self.forks)}, stale writes {len(self.stale)}, "
            f"duplicate effects {len(self.duplicates)}, unsettled {len(self.unsettled)}",
            *[f"  {p}" for p in (self.forks + self.stale + self.duplicates + self.unsettled)[:10]],
        ]


@dataclass
class Soak:
    engine: EngineSpec
    scenario: Scenario
    url: str
    workdir: Path
    procs: int = 8
    workflows: int = 200
    lease_ttl: float = 0.3
    time_limit_s: float = 120.0
    kill_every_s: float = 0.2
    stall_p: float = 0.05
    overtake_p: float = 0.05
    seed: int = 0
    stop_at_stale: bool = False  # end the race at the first stale write (a search, not a soak)

    def run(self) -> SoakResult:
        self.workdir.mkdir(parents=True, exist_ok=True)
        handle = store_for(self.workdir, self.url)
        services = ServiceProcess(self.workdir / "journal.sqlite").start()
        ids = [f"soak-{i}" for i in range(self.workflows)]
        judged: SoakResult | None = None
        try:
            with httpx.Client(base_url=services.base_url) as http:
                first = self.engine.factory(self._env(handle, http, "starter"), self.scenario)
                for i, wid in enumerate(ids):
                    first.start(self.scenario, wid, self.scenario.make_input(str(i)))
            if self.engine.prepare is not None:
                self.engine.prepare(handle)
            record_writes(handle.url)
            began = time.monotonic()
            kills = self._race(handle, services.base_url, ids, began)
            seconds = time.monotonic() - began
            judged = self._judge(handle.url, services, ids, seconds, kills)
            return judged
        finally:
            services.stop()
            handle.shared.close()
            if judged is not None and judged.ok:  # a clean race's scratch schema goes; a
                drop_scratch(self.url, handle.url)  # failing one's stays, for `inspect`

    def _env(
        self, handle: StoreHandle, http: httpx.Client, owner: str, hook: BoundaryHook = no_hook
    ) -> WorkerEnv:
        return WorkerEnv(
            owner=owner,
            store=handle,
            http=http,
            hook=hook,
            clock=SystemClock(),
            versions=BASE_VERSIONS,
            lease_ttl=self.lease_ttl,
        )

    def _race(self, handle: StoreHandle, base_url: str, ids: list[str], began: float) -> int:
        rng = random.Random(self.seed)
        counts = self.workdir / "refusals"
        counts.mkdir(exist_ok=True)
        (self.workdir / "overtaken").mkdir(exist_ok=True)
        pids = {self._fork(handle, base_url, ids, n, counts) for n in range(self.procs)}
        kills, spawned = 0, self.procs
        while pids and time.monotonic() - began < self.time_limit_s:
            if self.stop_at_stale and judge_writes(recorded_writes(handle.url)):
                break
            time.sleep(rng.uniform(0, 2 * self.kill_every_s))
            for pid in list(pids):
                done, _ = os.waitpid(pid, os.WNOHANG)
                if done:
                    pids.discard(pid)
            # a holder paused until overtaken is spared until it wakes: the moment it is
            # paused for (its write after the takeover) is the one a fencing token is for
            alive = sorted(pids - set(waiting(self.workdir / "overtaken").values()))
            if alive and rng.random() < 0.7:
                victim = rng.choice(alive)
                os.kill(victim, signal.SIGKILL)
                os.waitpid(victim, 0)
                pids.discard(victim)
                kills += 1
                if self._unsettled(handle, ids):
                    pids.add(self._fork(handle, base_url, ids, spawned, counts))
                    spawned += 1
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        return kills

    def _unsettled(self, handle: StoreHandle, ids: list[str]) -> bool:
        return bool(_statuses(handle.url, ids, settled=False))

    def _fork(
        self, handle: StoreHandle, base_url: str, ids: list[str], n: int, counts: Path
    ) -> int:
        pid = os.fork()
        if pid:
            return pid
        code = 0
        try:
            handle.shared.after_fork()
            self._work(handle, base_url, ids, n, counts / f"w{n}")
        except BaseException:
            code = 70
        finally:
            os._exit(code)

    def _work(self, handle: StoreHandle, base_url: str, ids: list[str], n: int, out: Path) -> None:
        """One worker: resume random unfinished workflows until none is left."""
        rng = random.Random(self.seed * 1000 + n)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        transport = FaultInjectingTransport(planned=False, clock=time.time)
        with httpx.Client(base_url=base_url, transport=transport, timeout=5.0) as http:
            pauses = Pauses(
                rng,
                handle.url,
                self.workdir / "overtaken",
                self.lease_ttl,
                self.stall_p,
                self.overtake_p,
                lambda word: os.write(fd, f"{word}\n".encode()),
            )
            engine = self.engine.factory(self._env(handle, http, f"w{n}", pauses), self.scenario)
            while True:
                left = _statuses(handle.url, ids, settled=False)
                if not left:
                    return
                for wid in rng.sample(left, min(4, len(left))):
                    for chosen in (*waiting(pauses.folder), wid):  # a paused holder's first
                        pauses.workflow_id = chosen
                        try:
                            engine.resume(chosen)
                        except KillpointError as exc:
                            os.write(fd, f"{type(exc).__name__}\n".encode())
                        finally:
                            pauses.resumed()

    def _judge(
        self, url: str, services: ServiceProcess, ids: list[str], seconds: float, kills: int
    ) -> SoakResult:
        refusals: Counter[str] = Counter()
        for f in (self.workdir / "refusals").iterdir():
            refusals.update(f.read_text().split())
        overtaken = refusals.pop(OVERTAKEN, 0)
        forks, transitions, takeovers = judge_lineages(ids, _lineages(url))
        duplicates = [
            f"{service} {key}: applied {count} times"
            for service in sorted(self.scenario.workflow.services)
            for key, count in services.journal.effects_by_business_key(service).items()
            if count > 1
        ]
        unsettled = [f"{w}: {s}" for w, s in _statuses(url, ids, settled=False, shown=True)]
        return SoakResult(
            workflows=len(ids),
            seconds=seconds,
            transitions=transitions,
            kills=kills,
            refusals=refusals,
            overtaken=overtaken,
            takeovers=takeovers,
            acquisitions=_acquisitions(url),
            forks=forks,
            stale=judge_writes(recorded_writes(url)),
            duplicates=duplicates,
            unsettled=unsettled,
        )


Lineage = dict[str, list[tuple[int, int]]]


def judge_lineages(ids: list[str], checkpoints: Lineage) -> tuple[list[str], int, int]:
    """Forks (a sequence missing, repeated or out of order), transitions and takeovers."""
    forks, transitions, takeovers = [], 0, 0
    for wid in ids:
        rows = checkpoints.get(wid, [])
        seqs = [s for s, _ in rows]
        tokens = [tok for _, tok in rows]
        transitions += max(len(rows) - 1, 0)
        takeovers += max(len(set(tokens[1:])) - 1, 0)
        if seqs != list(range(1, len(seqs) + 1)):
            forks.append(f"{wid}: sequences {seqs}")
    return forks, transitions, takeovers


def _query(url: str, sql: str) -> list[tuple[object, ...]]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return [tuple(r) for r in conn.execute(text(sql))]
    finally:
        engine.dispose()


def _statuses(url: str, ids: list[str], *, settled: bool, shown: bool = False) -> list[Any]:
    """The workflows not (or, `settled`, already) in a final status; a stop without a reason
    counts as unsettled."""
    rows = _query(url, "SELECT workflow_id, status, status_reason FROM workflows")
    final = {
        str(w): str(s)
        for w, s, reason in rows
        if s == "completed" or (str(s) in SETTLED and reason)
    }
    found = {str(w): str(s) for w, s, _ in rows}
    left = [w for w in ids if w not in final]
    return [(w, found.get(w, "absent")) for w in left] if shown else left


def _lineages(url: str) -> Lineage:
    rows = _query(url, "SELECT workflow_id, sequence, fencing_token FROM checkpoints ORDER BY 1, 2")
    out: Lineage = {}
    for wid, seq, token in rows:
        out.setdefault(str(wid), []).append((int(str(seq)), int(str(token))))
    return out


def _acquisitions(url: str) -> int:
    """Each acquisition of a lease moves a workflow's fencing token up by one."""
    value = _query(url, "SELECT COALESCE(SUM(fencing_token), 0) FROM workflows")[0][0]
    return int(str(value))
