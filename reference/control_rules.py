"""When an operator's control may act: one rule per control, shared by the control and the views.

Seed 000: "manual controls should be narrow: reconcile, retry with the same key, compensate,
request approval, branch, or terminate. 'Force complete' is usually too dangerous." Each rule
reads the same `Facts` and says why a control is refused now, or None when it may act. The
controls (`controls.Controls`) refuse with these reasons, and `killpoint inspect` and the queue
list the controls allowed with the very same function, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from killpoint.contract.adapters import Capabilities
from killpoint.contract.records import EffectRecord, EffectStatus, RunStatus
from killpoint.contract.workflow import StepKind, Workflow

CONTROLS = ("reconcile", "retry", "compensate", "request-approval", "branch", "terminate")
# a run that ended and needs no one: no control reopens it
CLOSED = frozenset({RunStatus.COMPLETED, RunStatus.COMPENSATED, RunStatus.FAILED})
IN_DOUBT = frozenset({EffectStatus.STARTED, EffectStatus.UNKNOWN, EffectStatus.NEEDS_REVIEW})
DONE = frozenset({EffectStatus.COMMITTED, EffectStatus.VERIFIED})


@dataclass(frozen=True)
class Facts:
    """What the rules read of one workflow: its row, trusted checkpoint, ledger and definition.

    `rejected` is why its latest checkpoint could not be trusted (None: it was); `lease_owner`
    the owner of a live lease (None: free or lapsed); `services` the recovery flags of the
    services it knows (a missing one is unknown); `workflow` its definition, if known."""

    status: RunStatus
    rejected: str | None
    effects: tuple[EffectRecord, ...]
    attempts_left: int
    lease_owner: str | None = None
    services: Mapping[str, Capabilities] | None = None
    workflow: Workflow | None = None

    @property
    def in_doubt(self) -> tuple[EffectRecord, ...]:
        return tuple(e for e in self.effects if e.status in IN_DOUBT)

    def caps(self, service: str) -> Capabilities | None:
        return (self.services or {}).get(service)


def refusal(control: str, facts: Facts) -> str | None:
    """Why `control` may not act on the run now; None when it may."""
    rule = RULES.get(control)
    if rule is None:
        return f"no control {control!r}: the controls are {', '.join(CONTROLS)} (no force-complete)"
    if facts.status in CLOSED:
        return f"the run is {facts.status.value}: no control reopens a run that ended"
    if facts.rejected is not None:
        return f"its latest checkpoint is rejected ({facts.rejected}): nothing to act from"
    if facts.lease_owner is not None:
        return f"a live lease is held by {facts.lease_owner}: a worker owns the run now"
    return rule(facts)


def allowed(facts: Facts) -> tuple[str, ...]:
    """The controls that may act now, in the order of `CONTROLS`."""
    return tuple(c for c in CONTROLS if refusal(c, facts) is None)


def refusals(facts: Facts) -> dict[str, str]:
    """Each control refused now, with why."""
    return {c: why for c in CONTROLS if (why := refusal(c, facts)) is not None}


def _reconcile(facts: Facts) -> str | None:
    doubts = facts.in_doubt
    if not doubts:
        return "no effect is in doubt: nothing to ask a service about"
    for e in doubts:
        caps = facts.caps(e.service)
        if caps is not None and not caps.queryable:
            return f"{e.service} cannot be asked about {e.operation_id}: it has no lookup"
    return None


def _retry(facts: Facts) -> str | None:
    doubts = facts.in_doubt
    if not doubts:
        return "no effect is in doubt: nothing to retry"
    if facts.attempts_left <= 0:
        return "the attempts budget is spent: a retry would exceed it"
    for e in doubts:
        caps = facts.caps(e.service)
        if caps is None:
            return f"the recovery flags of {e.service} are unknown: a retry could duplicate it"
        if not caps.idempotent:
            irreversible = "irreversible, " if caps.irreversible else ""
            return (
                f"{e.operation_id} on {e.service}: outcome unknown, {irreversible}and "
                f"{e.service} does not dedup by key: a retry could apply it twice "
                "(reconcile, compensate or terminate)"
            )
    return None


def _compensate(facts: Facts) -> str | None:
    wf = facts.workflow
    if wf is None:
        return "the workflow's definition is unknown: no compensating step to run"
    steps = [t.step for t in wf.transitions if t.step.kind is StepKind.COMPENSATE]
    if not steps:
        return f"workflow {wf.name!r} has no compensating step"
    if facts.in_doubt:
        return f"{facts.in_doubt[0].operation_id} is in doubt: reconcile it before undoing it"
    targets = {s.target_step for s in steps}
    if not any(e.step in targets and e.status in DONE for e in facts.effects):
        return f"no committed effect of {sorted(t or '' for t in targets)} to undo"
    return None


def _request_approval(facts: Facts) -> str | None:
    wf = facts.workflow
    if wf is None:
        return "the workflow's definition is unknown: no gate to go back to"
    if not any(t.step.kind is StepKind.APPROVAL for t in wf.transitions):
        return f"workflow {wf.name!r} has no approval gate"
    return None


def _branch(facts: Facts) -> str | None:
    if facts.in_doubt:
        return (
            f"{facts.in_doubt[0].operation_id} is in doubt: a branch would stop on it again "
            "(reconcile, retry or compensate it first)"
        )
    return None


def _terminate(facts: Facts) -> str | None:
    return None


RULES: dict[str, Callable[[Facts], str | None]] = {
    "reconcile": _reconcile,
    "retry": _retry,
    "compensate": _compensate,
    "request-approval": _request_approval,
    "branch": _branch,
    "terminate": _terminate,
}
