"""Recovery objectives: how much work a crash may cost (RPO), how soon a run must be back (RTO).

Seed 000: "Set an RPO for how much completed work may be lost and an RTO for how quickly a run
should resume or escalate." A scenario declares them (`Scenario.objectives`); for every crash of
every run the harness measures both off the history and judges each crash against them. A miss
is flagged, never a violation: an objective is the team's target, not an invariant of correct
recovery. Unknown beats true: with no objective declared the answer is "not_declared", not met.

Measured per crash (a worker that died), engine-neutral, off the boundary hits and workers:

- lost work: the steps the dead worker had begun that a later worker began again (the most any
  one of them did: two recovering at once, or one crashed in turn, redo it once). A crash inside
  a step costs that step, one after its checkpoint commit nothing, an engine that starts over
  every step it had done. Counted in steps, not seconds: the injected clock stands still while
  a worker works (it moves between workers and at scheduled jumps), so seconds of redone work
  would read 0 for every engine.
- recovery time (injected clock): from the death to the first later worker that begins a step
  (`resumed`) or stops the run at a terminal status without one (`stopped`: escalated to
  review, quarantined, or found finished; where the engine has a history reader, only if its
  durable records show the run ended). Downtime between workers and lease waits count, as
  they would in production. None when neither happened: the objective is then missed.

An engine whose hook reports no `step.begin` shows neither: its redone work is unknown, and a
recovery time past the RTO is unknown too (its stop is only an upper bound on its resume).
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from killpoint.contract.boundaries import STEP_BEGIN
from killpoint.contract.records import is_terminal
from killpoint.harness.history import History, HitRecord, WorkerRecord
from killpoint.harness.loading import MAX_SECONDS, Count, Seconds

MAX_RPO_STEPS = 10_000  # no workflow has that many steps: a larger RPO is a typo
Judgement = Literal["met", "missed", "unknown", "not_declared", "no_crash"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class RecoveryObjectives(_Model):
    """What a scenario promises of every crash: at most `rpo_steps` steps redone, and the run
    resumed or escalated within `rto_s` seconds of the injected clock. Either may be left out
    (then it is not judged); a declaration of neither is refused as the typo it is."""

    rpo_steps: int | None = Field(default=None, ge=0, le=MAX_RPO_STEPS)
    rto_s: float | None = Field(default=None, ge=0, le=MAX_SECONDS)

    @model_validator(mode="after")
    def _declares_one(self) -> RecoveryObjectives:
        if self.rpo_steps is None and self.rto_s is None:
            raise ValueError("declare rpo_steps, rto_s or both (or no objectives at all)")
        return self

    def rpo_met(self, crash: CrashRecovery) -> bool | None:
        """Whether the crash lost no more work than the RPO allows; None when none is set or
        the engine does not show its steps."""
        if self.rpo_steps is None or crash.lost_steps is None:
            return None
        return crash.lost_steps <= self.rpo_steps

    def rto_met(self, crash: CrashRecovery) -> bool | None:
        """Whether the run was back within the RTO (never back: missed); None when none is set,
        or when past it but the engine does not show its steps (it may have resumed earlier)."""
        if self.rto_s is None:
            return None
        if crash.recovery_s is not None and crash.recovery_s <= self.rto_s:
            return True
        return None if crash.lost_steps is None else False


class CrashRecovery(_Model):
    """One crash of a run and what it cost."""

    worker: Count  # the worker that died
    at: str  # where it died, as the worker's end says
    # steps it had begun that a later worker began again; None when the engine reports no
    # `step.begin` (then the stop is all that shows it back, and `recovery_s` is an upper bound)
    lost_steps: Count | None
    recovery_s: Seconds | None  # injected clock from the death to resumed or stopped
    back_by: Literal["resumed", "stopped"] | None = None  # None: never back


class RunObjectives(_Model):
    """A run's crashes judged against the objectives its scenario declared (None: none)."""

    declared: RecoveryObjectives | None = None
    crashes: list[CrashRecovery] = []
    rpo: Judgement
    rto: Judgement

    @property
    def missed(self) -> bool:
        return "missed" in (self.rpo, self.rto)


def judge(declared: RecoveryObjectives | None, crashes: list[CrashRecovery]) -> RunObjectives:
    """The run's verdict on each objective, Jepsen's way: missed when any crash missed it,
    else unknown when any crash could not be told, else met."""

    def verdict(limit: float | None, met: list[bool | None]) -> Judgement:
        if not crashes:
            return "no_crash"
        if limit is None:
            return "not_declared"
        if False in met:
            return "missed"
        return "unknown" if None in met else "met"

    if declared is None:
        return RunObjectives(crashes=crashes, rpo=verdict(None, []), rto=verdict(None, []))
    return RunObjectives(
        declared=declared,
        crashes=crashes,
        rpo=verdict(declared.rpo_steps, [declared.rpo_met(c) for c in crashes]),
        rto=verdict(declared.rto_s, [declared.rto_met(c) for c in crashes]),
    )


def measure_objectives(history: History, declared: RecoveryObjectives | None) -> RunObjectives:
    """Every crash of the run measured and judged against `declared`."""
    return judge(declared, crash_recoveries(history))


def crash_recoveries(history: History) -> list[CrashRecovery]:
    begun = [h for h in history.hits if h.boundary == STEP_BEGIN]
    # a worker's stop is its word: it shows the run back only where the durable end agrees
    durable = history.durable_status
    stops = durable is None or is_terminal(durable)
    crashes = [_recovery(history.workers, death, begun, stops) for death in history.deaths]
    if begun:
        return crashes
    # an engine that reports no step: what it redid cannot be counted (unknown beats true)
    return [c.model_copy(update={"lost_steps": None}) for c in crashes]


def _recovery(
    workers: list[WorkerRecord], death: WorkerRecord, begun: list[HitRecord], stops: bool = True
) -> CrashRecovery:
    mine = Counter(h.step for h in begun if h.worker == death.worker)
    again: Counter[str | None] = Counter()
    for number in {h.worker for h in begun if h.worker > death.worker}:
        # the most any one later worker redid: two recovering at once redo a step once
        again |= Counter(h.step for h in begun if h.worker == number)
    back: list[tuple[float, Literal["resumed", "stopped"]]] = []
    for worker in workers:
        if worker.worker <= death.worker:
            continue
        first = next((h for h in begun if h.worker == worker.worker), None)
        if first is not None:
            back.append((first.time, "resumed"))
        elif stops and worker.end == "stopped" and is_terminal(worker.status):
            back.append((worker.ended_at, "stopped"))
    first_back = min(back, default=None)
    return CrashRecovery(
        worker=death.worker,
        at=death.reason.removeprefix("killed at "),
        lost_steps=sum(min(n, again[step]) for step, n in mine.items()),
        recovery_s=None if first_back is None else max(0.0, first_back[0] - death.ended_at),
        back_by=None if first_back is None else first_back[1],
    )
