"""The operator of a named case: the controls a person applies once a run stops for them.

A schedule may name operator controls (`FaultSchedule.controls`): once a worker's run stops
waiting for a person (needs review, quarantined, budget exhausted, dead-lettered), the harness
plays that person and applies them in order through the engine's `control(workflow_id, name,
actor, reason)` (`protocol.OperatedEngine`; an engine without one is not operated), then
resumes the run if a control handed it back. A control the engine refuses leaves the run where
it stopped. This is how the oracle reaches an engine's operator tools: a control that marks a
run complete while an effect is still in doubt is judged like any other way of ending a run.
The exploration's operators (`harness.campaign.operators`) name controls the same way, on runs its
faults stopped, and keep injecting faults: a worker may die inside a control. Its record then
says the control was in flight (what it did is in the store, if anything), and the next worker
that finds the run still waiting applies the schedule's controls again, as a person would.
"""

from __future__ import annotations

from killpoint.contract.errors import KillpointError
from killpoint.contract.records import Outcome, RunStatus
from killpoint.harness.protocol import EngineUnderTest, OperatedEngine
from killpoint.harness.schedule import FaultSchedule

ACTOR = "killpoint-operator"
WAITING = frozenset(
    {
        RunStatus.NEEDS_REVIEW,
        RunStatus.QUARANTINED,
        RunStatus.BUDGET_EXHAUSTED,
        RunStatus.DEAD_LETTERED,
    }
)
QUEUED = frozenset(status.value for status in WAITING)  # as histories spell them
# the narrow controls of seed 000, as `OperatedEngine.control` names them
CONTROLS = ("reconcile", "retry", "compensate", "request-approval", "branch", "terminate")
IN_FLIGHT = "in flight"  # a control whose worker died in it: it may or may not have acted


def operate(
    engine: EngineUnderTest, schedule: FaultSchedule, outcome: Outcome, applied: list[str]
) -> Outcome:
    """Apply the schedule's controls once per run (`applied` keeps what was done, and what was
    refused), when `outcome` waits for a person; the run's outcome after them. A control is
    recorded in flight before it is applied, so a worker that dies in it leaves that said."""
    done = [line for line in applied if not line.endswith(IN_FLIGHT)]
    if not isinstance(engine, OperatedEngine) or done or outcome.status not in WAITING:
        return outcome
    for name in schedule.controls:
        applied.append(f"{name}: {IN_FLIGHT}")
        try:
            outcome = engine.control(outcome.workflow_id, name, ACTOR, f"case {schedule.run_id}")
        except KillpointError as exc:
            applied[-1] = f"{name} refused: {exc}"
            return outcome
        applied[-1] = f"{name}: {outcome.status.value}"
    if outcome.status is RunStatus.RUNNING:
        return engine.resume(outcome.workflow_id)
    return outcome
