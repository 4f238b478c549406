"""Verified completion: `completed` only after a read of authoritative state saw each effect's
postcondition, and only with outputs that pass the workflow's own validators."""

from __future__ import annotations

from killpoint.harness.checkers._common import cite_effect, is_mutation, ok, violated
from killpoint.harness.contract.workflow import StepKind, Workflow
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "verified_completion"


def check_verified_completion(history: History, workflow: Workflow) -> Verdict:
    if history.final_status != "completed":
        return ok(NAME, f"not completed ({history.final_status})")
    for expected in history.expected:
        if not expected.verifiable:
            continue
        applied = [
            e
            for e in history.applied
            if e.service == expected.service and e.business_key == expected.business_key
        ]
        if not applied:
            continue  # single_effect reports a completed run with a missing effect
        after = applied[0].seq
        seen = [
            r
            for r in history.requests
            if r.service == expected.service
            and r.business_key == expected.business_key
            and not is_mutation(r)
            and r.outcome == "ok"
            and r.seq > after
        ]
        if not seen:
            return violated(
                NAME,
                f"completed without a read that saw {expected.service} [{expected.business_key}]",
                [
                    cite_effect(applied[0]),
                    "no later successful read of it in the journal",
                    f"final status completed in state {history.final_state}",
                ],
                [EvidenceRef(kind="effect", index=after)],
            )
    final = max(
        (c for c in history.checkpoints if c.trusted), key=lambda c: c.sequence, default=None
    )
    for transition in workflow.transitions:
        step = transition.step
        if step.kind is not StepKind.PURE or step.validate is None or final is None:
            continue
        if step.name in final.outputs:
            problem = step.validate(final.outputs[step.name])
            if problem:
                return violated(
                    NAME,
                    f"completed with {step.name} output that fails validation: {problem}",
                    [f"checkpoint #{final.sequence} outputs[{step.name!r}] fails: {problem}"],
                    [EvidenceRef(kind="checkpoint", index=final.sequence)],
                )
    return ok(NAME, "every effect verified by a read")
