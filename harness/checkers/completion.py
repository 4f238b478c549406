"""Verified completion: `completed` only after a read of authoritative state saw each effect's
postcondition, and only with outputs that pass the workflow's own validators. A delete's
postcondition is an absence: a later read that found nothing there.

An engine's own ledger must agree: a run completed while a ledger row of it still says its
outcome is in doubt (started, unknown, needs review) declared done what it could not prove (a
"force complete"). The read half judges any engine from the services' journal. The validator
half reads the outputs the final trusted checkpoint carries: when a validated step had to run
on the way to the final state and its output is not visible (no history reader, no trusted
checkpoint, or one without that output), it is unknown, unless the read half already proved a
violation. A run completed by its durable records or by its worker's word is held to it (a
worker that told its caller "completed" declared it); without a history reader, a run its
workers did not say completed may still have, so an unread effect makes it unknown.
"""

from __future__ import annotations

from killpoint.contract.workflow import StepKind, Workflow
from killpoint.fake_services.faults import OPERATIONS
from killpoint.harness.checkers._common import (
    cite_effect,
    ended_as,
    is_mutation,
    ok,
    unknown,
    violated,
)
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "verified_completion"
# the operations that take something away: a read proves them by finding nothing
IN_DOUBT = frozenset({"started", "unknown", "needs_review"})  # a ledger row's unproven outcome
DELETES = frozenset((service, op) for method, _, service, op in OPERATIONS if method == "DELETE")


def check_verified_completion(history: History, workflow: Workflow) -> Verdict:
    completed = ended_as(history, "completed")
    if completed is False:
        return ok(NAME, f"not completed ({history.final_status})")
    unread = _unverified_effect(history) or _ledger_in_doubt(history)
    if unread is not None and completed is None:  # done or not, nothing durable shows
        return unknown(NAME, f"if it completed: {unread.summary}; no durable record shows")
    if unread is not None:
        return unread
    return _validated_outputs(history, workflow)


def _ledger_in_doubt(history: History) -> Verdict | None:
    """A ledger row still in doubt when the run completed, if any."""
    doubts = [e for e in history.effects if e.status.value in IN_DOUBT]
    if not doubts:
        return None
    row = doubts[0]
    return violated(
        NAME,
        f"completed while its ledger says {row.operation_id} is {row.status.value}",
        [
            f"ledger row {row.operation_id} on {row.service}: {row.status.value} ({row.reason})",
            f"{_ended(history)}: {history.final_reason}",
        ],
    )


def _ended(history: History) -> str:
    """How the run came to be judged completed: its durable end, or its worker's word."""
    line = f"final status {history.final_status} in state {history.final_state}"
    if history.final_status == "completed" and history.readable:
        return line
    return f"its last worker said completed; {line}"


def _unverified_effect(history: History) -> Verdict | None:
    """An effect the run completed on without a later successful read of it, if any."""
    for expected in history.expected:
        if not expected.verifiable:
            continue
        applied = [
            e
            for e in history.applied
            if e.service == expected.service
            and e.business_key == expected.business_key
            and expected.operation in (None, e.operation)
        ]
        if not applied:
            continue  # single_effect reports a completed run with a missing effect
        after = applied[0].seq
        gone = (expected.service, expected.operation) in DELETES
        seen = [
            r
            for r in history.requests
            if r.service == expected.service
            and r.business_key == expected.business_key
            and not is_mutation(r)
            and r.outcome == ("not_found" if gone else "ok")
            and r.seq > after
        ]
        if not seen:
            what = f"{expected.service} [{expected.business_key}]{' deleted' if gone else ''}"
            return violated(
                NAME,
                f"completed without a read that saw {what}",
                [
                    cite_effect(applied[0]),
                    f"no later read {'found it gone' if gone else 'saw it'} in the journal",
                    _ended(history),
                ],
                [EvidenceRef(kind="effect", index=after)],
            )
    return None


def _validated_outputs(history: History, workflow: Workflow) -> Verdict:
    checks = [
        (t.step.name, validate)
        for t in workflow.transitions
        if t.step.kind is StepKind.PURE
        and (validate := t.step.validate) is not None
        and _required(workflow, t.step.name, history.final_state)
    ]
    final = max(
        (c for c in history.checkpoints if c.trusted), key=lambda c: c.sequence, default=None
    )
    if not checks:
        return ok(NAME, "every effect verified by a read")
    if final is None:
        where = "no history reader" if not history.readable else "no trusted checkpoint"
        return unknown(
            NAME, f"the engine shows {where}: the output of {checks[0][0]} cannot be validated"
        )
    for name, validate in checks:
        problem = validate(final.outputs[name]) if name in final.outputs else None
        if problem:
            return violated(
                NAME,
                f"completed with {name} output that fails validation: {problem}",
                [f"checkpoint #{final.sequence} outputs[{name!r}] fails: {problem}"],
                [EvidenceRef(kind="checkpoint", index=final.sequence)],
            )
    missing = [name for name, _ in checks if name not in final.outputs]
    if missing:
        return unknown(
            NAME, f"checkpoint #{final.sequence} carries no output of {', '.join(missing)}"
        )
    return ok(NAME, "every effect verified by a read; every validated output passes")


def _required(workflow: Workflow, step: str, final_state: str) -> bool:
    """Whether every path from the initial state to `final_state` runs `step` (for a final
    state the workflow does not know, assume it does)."""
    if final_state not in workflow.states:
        return True
    reached, frontier = {workflow.initial}, [workflow.initial]
    while frontier:
        transition = workflow.transition_from(frontier.pop())
        if transition is None or transition.step.name == step:
            continue
        for end in (transition.target, transition.on_failure):
            if end is not None and end not in reached:
                reached.add(end)
                frontier.append(end)
    return final_state not in reached
