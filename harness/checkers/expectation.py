"""A named case's expected recovery (the seed's), judged as one more verdict beside the oracle."""

from __future__ import annotations

from killpoint.harness.history import History
from killpoint.harness.protocol import CLOCK, SHARED_PROCESS
from killpoint.harness.results import Verdict
from killpoint.harness.scenario import Expect, NotApplicable

__all__ = ["expectation"]


def expectation(history: History, expect: Expect) -> Verdict:
    """The seed's expected recovery for a named case, as one more verdict; unknown (not
    applicable) when the case's premise did not happen to this engine — a tampering it cannot
    stage, a crash point it never reaches — or the case asks of it what it does not keep."""
    premise = _missing_premise(history)
    problem = premise or expect(history)
    if problem is None:
        return Verdict(checker="expected_recovery", valid=True)
    if isinstance(problem, NotApplicable):
        return Verdict(
            checker="expected_recovery", valid="unknown", summary=f"not applicable: {problem}"
        )
    return Verdict(
        checker="expected_recovery",
        valid=False,
        summary=problem,
        evidence=[f"{history.schedule.describe()}: {problem}"],
    )


def _missing_premise(history: History) -> NotApplicable | None:
    paired = history.schedule.interleave and history.schedule.tier == "inprocess"
    if paired and SHARED_PROCESS in history.lacks:
        return NotApplicable("the engine runs one worker per process: two need the real tier")
    if CLOCK in history.lacks and history.schedule.moves_time:
        return NotApplicable(
            "the engine reads the wall clock, not the world clock: the case's downtime or "
            "clock jump did not happen to it"
        )
    unstaged = [t.kind for t in history.tampered if not t.applied]
    if unstaged:
        return NotApplicable(
            f"the engine under test cannot stage {', '.join(unstaged)}: nothing was tampered, "
            "so the case's recovery was not exercised"
        )
    reached = {(h.worker, h.step, h.boundary, h.occurrence) for h in history.hits}
    faults = [(c, "crash") for c in history.schedule.crashes]
    faults += [(j.at, "clock jump") for j in history.schedule.clock_jumps]
    for point, what in faults:
        if (point.worker, point.step, point.boundary, point.occurrence) not in reached:
            return NotApplicable(
                f"the engine never reached {point.label()}: the case's {what} did not happen"
            )
    return None
