"""The oracle: invariants every run must satisfy, each judged over a `History` alone.

Checkers read only the history and the scenario's spec, never the engine, so they judge an
engine we do not own exactly as they judge ours. Each returns a `Verdict`, by one rule:

- **true** only when the history holds every piece of evidence the invariant depends on in this
  run and none of it objects. A vacuous run whose evidence is fully visible (nothing gated,
  nothing tampered) is true.
- **unknown** when some evidence it would need is missing: the engine exposes no history reader
  (`History.readable` is False, no checkpoints), no trusted checkpoint carries what it reads (a
  budget, an output), or a premise of the run could not be staged (a tampering the engine
  cannot stage: `TamperRecord.applied` is False).
- **false**, with the smallest evidence that proves it, whenever the evidence it does have
  proves a violation: the halves that read the services' journals judge an engine without a
  reader all the same.

The end of a run a checker judges is the one the engine's durable records show (its operator
queue, else its latest trusted checkpoint: `harness.run.durable`), never what a worker returned;
the workers' word is kept apart (`History.claimed_status`), can make a verdict false (what a
worker told its caller is held against it) but never true, and `durable_outcome` holds it to
the durable end. So `intended_delete`, `single_compensation` and `engine_failure`, whose
evidence is the journals and the harness's own record, always judge; `single_effect` and
`progress` judge from the journals and the workers anywhere, unknown without a reader only
where the durable end decides; `atomic_write` judges from the journal too, unknown only for an
append at a name the scenario does not declare; `durable_outcome` and `operator_queue` (a run
stopped for a person is in the engine's durable queue, with its evidence) need a reader, and
the queue check an engine that keeps a queue;
`monotonic_sequence`, `fencing` and `deploy_policy` (but for a run without a deploy) need the
engine's checkpoints; `budget_preserved`,
`authority`, `verified_completion`, `attempts_accounted`, `intent_applied`, `expected_outcome`,
`handoff_terms` and `message_integrity` judge their journal halves anywhere and answer unknown
for the half they cannot see; `secrets_kept` judges the harness's scan of what the run left
(unknown unscanned); `deadline_kept` judges its journal half anywhere and its checkpoints' time
budgets where seen.
"""

from __future__ import annotations

from collections.abc import Callable

from killpoint.contract.workflow import Workflow
from killpoint.harness.checkers._common import unknown
from killpoint.harness.checkers.atomic_write import check_atomic_write
from killpoint.harness.checkers.attempts import check_attempts
from killpoint.harness.checkers.authority import check_authority
from killpoint.harness.checkers.budget import check_budget
from killpoint.harness.checkers.compensation import check_compensation
from killpoint.harness.checkers.completion import check_verified_completion
from killpoint.harness.checkers.deadline import check_deadline
from killpoint.harness.checkers.deploy import check_deploy
from killpoint.harness.checkers.durable import check_durable_outcome
from killpoint.harness.checkers.failure import check_engine_failure
from killpoint.harness.checkers.fencing import check_fencing
from killpoint.harness.checkers.handoff import check_handoff
from killpoint.harness.checkers.intended_delete import check_intended_delete
from killpoint.harness.checkers.intent import check_intent
from killpoint.harness.checkers.isolation import check_isolation
from killpoint.harness.checkers.message_integrity import check_message_integrity
from killpoint.harness.checkers.outcome import check_outcome
from killpoint.harness.checkers.progress import check_progress
from killpoint.harness.checkers.queue import check_operator_queue
from killpoint.harness.checkers.secrets import check_secrets
from killpoint.harness.checkers.sequence import check_sequence
from killpoint.harness.checkers.single_effect import check_single_effect
from killpoint.harness.history import History
from killpoint.harness.protocol import CLOCK
from killpoint.harness.results import Verdict

Checker = Callable[[History, Workflow], Verdict]

CHECKERS: dict[str, Checker] = {
    "engine_failure": check_engine_failure,  # first: an engine's crash explains what follows
    "single_effect": check_single_effect,
    "atomic_write": check_atomic_write,
    "intended_delete": check_intended_delete,
    "monotonic_sequence": check_sequence,
    "budget_preserved": check_budget,
    "authority": check_authority,
    "verified_completion": check_verified_completion,
    "progress": check_progress,
    "attempts_accounted": check_attempts,
    "intent_applied": check_intent,
    "expected_outcome": check_outcome,
    "fencing": check_fencing,
    "single_compensation": check_compensation,
    "handoff_terms": check_handoff,
    "deploy_policy": check_deploy,
    "message_integrity": check_message_integrity,
    "isolation": check_isolation,
    "durable_outcome": check_durable_outcome,
    "operator_queue": check_operator_queue,
    "secrets_kept": check_secrets,
    "deadline_kept": check_deadline,
}


# The checks that judge time on the world clock: for an engine that reads the wall clock
# (`protocol.CLOCK`), a schedule that moves the world clock moved nothing it knows of.
TIMED = frozenset({"deadline_kept", "authority"})


def check_all(history: History, workflow: Workflow) -> list[Verdict]:
    untimed = CLOCK in history.lacks and history.schedule.moves_time
    return [
        unknown(name, WALL_CLOCK) if untimed and name in TIMED else checker(history, workflow)
        for name, checker in CHECKERS.items()
    ]


WALL_CLOCK = "the engine reads the wall clock: the schedule's time moves did not happen to it"


__all__ = ["CHECKERS", "Checker", "check_all"]
