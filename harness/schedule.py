"""Fault schedules: the whole plan of one run, as JSON, so any run can be replayed exactly.

A schedule names the engine under test and says which worker dies at which boundary hit, which
requests the network loses, when the clock jumps, whether a checkpoint is tampered or a new
version deployed between workers, whether the start message is redelivered (or one that lies
delivered), how concurrent workers interleave, and which other runs share its world (its
neighbours). Replaying a schedule re-runs the same decisions in the same order; nothing in a
run is random.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from killpoint.contract.errors import KillpointError
from killpoint.contract.records import DeployStrategy, Versions
from killpoint.fake_services.faults import MAX_OCCURRENCE, FaultPlan
from killpoint.harness.loading import Version1, load_json
from killpoint.harness.tampering import tamper_kind

Tier = Literal["inprocess", "real"]


# Range checks: a schedule is read from files people edit, so every number has a bound that
# keeps a run finite (a downtime of 1e308 s made the lease expire "at inf").
YEAR_S = 365 * 86_400.0
MAX_WORKERS = 100
MAX_HITS = MAX_OCCURRENCE  # boundary hits one worker (or a pair) may count
Worker = Annotated[int, Field(ge=0, lt=MAX_WORKERS)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class HitPoint(_Frozen):
    """The `occurrence`-th hit of (step, boundary) in worker number `worker` (0 is the first)."""

    worker: Worker
    step: str | None
    boundary: str
    occurrence: int = Field(default=1, ge=1, le=MAX_HITS)

    def label(self) -> str:
        at = f"{self.step}:" if self.step else ""
        suffix = f"#{self.occurrence}" if self.occurrence > 1 else ""
        return f"w{self.worker} {at}{self.boundary}{suffix}"


class ClockJump(_Frozen):
    """Move the clock forward when a boundary is hit: a pause, a slow disk, a long GC."""

    at: HitPoint
    seconds: float = Field(gt=0, le=YEAR_S)


class Tamper(_Frozen):
    """Alter what a worker left behind, after it stopped: a kind from the open table
    `killpoint.harness.tampering.TAMPER_KINDS`, which the engine's tamper hook stages or
    declines."""

    after_worker: Worker
    kind: str

    @field_validator("kind")
    @classmethod
    def _known(cls, kind: str) -> str:
        try:
            return tamper_kind(kind).name
        except KillpointError as exc:
            raise ValueError(str(exc)) from None


class Deploy(_Frozen):
    """From worker `from_worker` on, workers run these versions (a deploy mid-run)."""

    from_worker: int = Field(ge=1, lt=MAX_WORKERS)
    versions: Versions
    # a deploy campaign's: what in-flight runs get (`harness.deploys` routes the workers);
    # None: a plain change of versions, left to the engine's compatibility policy
    strategy: DeployStrategy | None = None


class Interleave(_Frozen):
    """Two workers recover at once; they run one at a time and switch at boundary hits.

    `switch_at` lists global hit indices (counted over both workers from 0) after which the
    other worker gets the turn; `pause_expires_lease` advances the clock past the lease ttl at
    each switch, so the paused worker's lease lapses while it waits.
    """

    after_worker: Worker
    switch_at: tuple[Annotated[int, Field(ge=0, le=MAX_HITS)], ...] = ()
    pause_expires_lease: bool = False


# What a lying start message claims (`killpoint.harness.lies` makes each from the input): an
# amount raised, a target changed, another workflow's input, another tenant's claim, an approval
LieKind = Literal["amount", "target", "workflow", "tenant", "approval"]
LIE_KINDS: tuple[LieKind, ...] = ("amount", "target", "workflow", "tenant", "approval")
MAX_LIES = 8


class Lie(_Frozen):
    """The run's start message delivered again to worker `worker` before its resume, with
    content that differs from the original: an engine must ignore or reject it."""

    worker: Worker
    kind: LieKind

    def label(self) -> str:
        return f"lie:{self.kind}@w{self.worker}"


class Neighbour(_Frozen):
    """Another run in this run's world (`harness.run.neighbours`): before worker `before_worker`
    starts, it runs to its end on fault-free workers of its own, against the same store,
    services, clock and approval inbox. `tenant`: a second tenant with this run's input (the
    same business keys) and approvers of its own; `workflow`: another workflow of this run's
    tenant, with another run's input, through the same gates."""

    kind: Literal["tenant", "workflow"]
    before_worker: Worker = 0


MAX_NEIGHBOURS = 4


class FaultSchedule(_Frozen):
    version: Version1 = 1
    scenario: str
    run_id: str  # names the replay's folder: no path separators, a name's length
    tier: Tier = "inprocess"
    engine: str | None = None  # the engine under test as `--engine` names it; None: the caller's
    crashes: tuple[HitPoint, ...] = ()
    network: FaultPlan = Field(default_factory=FaultPlan)
    clock_jumps: tuple[ClockJump, ...] = ()
    downtime_s: float = Field(default=60.0, ge=0, le=YEAR_S)
    tamper: tuple[Tamper, ...] = ()
    deploys: tuple[Deploy, ...] = ()
    redeliver_start: bool = False
    # once the run has ended, the queue delivers its start message again to one more worker
    redeliver_after_end: bool = False
    interleave: Interleave | None = None
    max_workers: int = Field(default=12, ge=1, le=MAX_WORKERS)
    # an operator's controls, in order, once the run stops for a person (`harness.operator`)
    controls: tuple[Annotated[str, Field(max_length=40)], ...] = Field(default=(), max_length=6)
    # start messages that lie, each to a worker before its resume (`harness.lies`)
    lies: tuple[Lie, ...] = Field(default=(), max_length=MAX_LIES)
    # other runs in the same world, each before a worker of this one (`harness.run.neighbours`)
    neighbours: tuple[Neighbour, ...] = Field(default=(), max_length=MAX_NEIGHBOURS)

    @field_validator("run_id")
    @classmethod
    def _a_name(cls, run_id: str) -> str:
        if not run_id or len(run_id.encode()) > 200 or any(c in run_id for c in "/\\\0"):
            raise ValueError("a run id is a name of 1 to 200 bytes without '/', '\\' or NUL")
        return run_id

    def crash_in(self, worker: int) -> list[HitPoint]:
        return [c for c in self.crashes if c.worker == worker]

    @property
    def faulty(self) -> bool:
        """Whether the schedule injects anything: a clock jump too (a pause lapses a lease)."""
        return bool(
            self.crashes
            or self.clock_jumps
            or self.network.rules
            or self.tamper
            or self.interleave
            or self.redeliver_after_end
            or self.lies
        )

    @property
    def moves_time(self) -> bool:
        """Whether it moves the world clock past what any restart takes: a jump, a downtime
        longer than the usual minute, a pause that lets a lease lapse. An engine that reads the
        wall clock (`protocol.CLOCK`) lives through none of these."""
        usual = type(self).model_fields["downtime_s"].default
        lapses = self.interleave is not None and self.interleave.pause_expires_lease
        return bool(self.clock_jumps) or self.downtime_s > usual or lapses

    def describe(self) -> str:
        parts = [c.label() for c in self.crashes]
        parts += [f"{r.service}.{r.operation}:{r.mode}" for r in self.network.rules]
        parts += [f"tamper:{t.kind}@w{t.after_worker}" for t in self.tamper]
        parts += [
            f"deploy{':' + d.strategy if d.strategy else ''}@w{d.from_worker}" for d in self.deploys
        ]
        parts += [f"jump {j.seconds:g}s@{j.at.label()}" for j in self.clock_jumps]
        if self.redeliver_start:
            parts.append("redelivered start")
        if self.redeliver_after_end:
            parts.append("start redelivered after the end")
        if self.interleave:
            parts.append(f"two workers after w{self.interleave.after_worker}")
        parts += [f"operator {c}" for c in self.controls]
        parts += [lie.label() for lie in self.lies]
        parts += [f"{n.kind} neighbour before w{n.before_worker}" for n in self.neighbours]
        return ", ".join(parts) or "no faults"


def load_schedule(path: str | Path) -> FaultSchedule:
    """Read a schedule file; a clear `KillpointError` for anything that is not one."""
    return load_json(path, FaultSchedule, "fault schedule")


def save_schedule(schedule: FaultSchedule, path: str | Path) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(target.suffix + ".tmp")
    tmp.write_text(schedule.model_dump_json(indent=2))
    tmp.replace(target)
    return target
