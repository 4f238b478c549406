"""The checkpoint fold: what one step did, folded into the next checkpoint.

A pure function of the last checkpoint, the step's `Change`, the workflow and the clock
reading: no store, no seal, no hook. The dispatcher seals what it returns and commits it under
its lease; keeping the fold apart is what lets it be property-tested on its own
(tests/reference/test_fold.py) and read in one sitting.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import JsonValue

from killpoint.contract.records import (
    ArtifactRef,
    EffectRecord,
    EffectStatus,
    RunStatus,
    Versions,
)
from killpoint.contract.workflow import Step, Workflow
from killpoint.reference.budget import after_step
from killpoint.reference.checkpoint import (
    ApprovalGrant,
    Checkpoint,
    EffectRef,
    Lineage,
    OutputsRef,
    PendingWork,
    StepOutput,
)
from killpoint.reference.integrity import canonical_json, output_link, sha256_hex

SETTLED = (EffectStatus.VERIFIED, EffectStatus.COMPENSATED)  # dropped from the next checkpoint


@dataclass(slots=True)
class Change:
    """What one step did, to be folded into the next checkpoint.

    `state` is where the run goes; `status` stays RUNNING unless the step stopped it (a
    running change into a terminal state takes the workflow's terminal status). `reset` starts
    the run's outputs and artifacts over (a restart of its lineage)."""

    state: str
    status: RunStatus = RunStatus.RUNNING
    reason: str = ""
    outputs: dict[str, JsonValue] = field(default_factory=dict)
    artifacts: dict[str, ArtifactRef] = field(default_factory=dict)
    effects: list[EffectRecord] = field(default_factory=list)
    approvals: tuple[ApprovalGrant, ...] | None = None
    lineage: Lineage | None = None
    versions: Versions | None = None
    reset: bool = False


def fold(
    cp: Checkpoint,
    change: Change,
    step: Step | None,
    wf: Workflow,
    now: float,
    attempts_left: int,
) -> tuple[Checkpoint, tuple[StepOutput, ...]]:
    """The checkpoint after `cp` once `change` is committed, and the output rows it makes.

    `step` is the step that ran (None when none did: a budget stop, a compatibility decision),
    which spends its step and cost; `attempts_left` is the durable count the store holds."""
    sequence = cp.sequence + 1
    ref, inline = cp.outputs_ref, cp.outputs
    if change.reset:
        ref, inline = OutputsRef(since=sequence), {}
    rows = []
    for name, value in change.outputs.items():
        text = canonical_json(value).decode()
        sha = sha256_hex(text.encode())
        rows.append(StepOutput(sequence, name, text, sha))
        digest = output_link(ref.digest, sequence, name, sha)
        ref = OutputsRef(since=ref.since, count=ref.count + 1, digest=digest)
    status = change.status
    if status is RunStatus.RUNNING and change.state in wf.terminal:
        status = wf.terminal[change.state]
    budget = after_step(
        cp.budget,
        steps=1 if step else 0,
        cost=step.cost if step else 0,
        attempts_left=attempts_left,
        deadline=deadline(cp),
        now=now,
    )
    new = cp.model_copy(
        update={
            "sequence": sequence,
            "state": change.state,
            "status": status,
            "status_reason": change.reason,
            "outputs_ref": ref,
            "outputs": inline,
            "artifacts": _artifacts(cp, change),
            "effects": _effects(cp, change),
            "approvals": cp.approvals if change.approvals is None else change.approvals,
            "budget": budget,
            "pending": _pending(cp, change, step),
            "created_at": now,
            "next_actions": () if status.terminal else next_actions(wf, change.state),
            "lineage": change.lineage or cp.lineage,
            "versions": change.versions or cp.versions,
        }
    )
    return new, tuple(rows)


def deadline(cp: Checkpoint) -> float:
    """When the run's time budget runs out, on the engine's clock."""
    return cp.created_at + cp.budget.time_left_ms / 1000


def next_actions(wf: Workflow, state: str) -> tuple[str, ...]:
    transition = wf.transition_from(state)
    return () if transition is None else (transition.step.name,)


def effect_ref(record: EffectRecord) -> EffectRef:
    return EffectRef(
        operation_id=record.operation_id,
        intent=record.intent,
        idempotency_key=record.idempotency_key,
        status=record.status,
        receipt_id=record.receipt.resource_id if record.receipt else None,
    )


def _artifacts(cp: Checkpoint, change: Change) -> tuple[ArtifactRef, ...]:
    if not (change.reset or change.artifacts):
        return cp.artifacts
    kept = {} if change.reset else {a.produced_by: a for a in cp.artifacts}
    return tuple({**kept, **change.artifacts}.values())


def _effects(cp: Checkpoint, change: Change) -> tuple[EffectRef, ...]:
    """The effects still pending: settled ones leave, the step's own are added or replaced."""
    if not change.effects and not any(r.status in SETTLED for r in cp.effects):
        return cp.effects
    refs = {r.operation_id: r for r in cp.effects if r.status not in SETTLED}
    refs.update({r.operation_id: effect_ref(r) for r in change.effects})
    return tuple(refs.values())


def _pending(cp: Checkpoint, change: Change, step: Step | None) -> tuple[PendingWork, ...]:
    if change.status is RunStatus.WAITING_APPROVAL and step is not None:
        return (PendingWork(kind="approval", ref=step.gate or "", detail=change.reason),)
    if change.status is RunStatus.NEEDS_REVIEW:
        return (PendingWork(kind="review", ref=cp.state, detail=change.reason),)
    return ()
