"""Monotonic sequence: committed checkpoints are 1..n with no gap, duplicate or fork, and
every step from one to the next is a legal transition of the workflow.

Its evidence is the engine's own lineage: without a history reader, or with one that shows no
checkpoint of the workflow, there is nothing to judge and the answer is unknown.

A person may move a run where no step leads (seed 000's narrow controls): to the state a
compensating step starts from, or back to an approval gate. Such a move is legal only as the
work of a control the harness itself applied as the case's operator (`History.controls`), one
move per control, and only to where that control leads; never on the engine's word.
"""

from __future__ import annotations

import itertools
from collections import Counter

from killpoint.contract.workflow import StepKind, Workflow
from killpoint.harness.checkers._common import ok, unknown, violated
from killpoint.harness.history import History
from killpoint.harness.protocol import CheckpointRecord
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "monotonic_sequence"
MOVING_CONTROLS = ("compensate", "request-approval")  # the controls that move a run's state


def _refs(*cps: CheckpointRecord) -> list[EvidenceRef]:
    return [EvidenceRef(kind="checkpoint", index=c.sequence) for c in cps]


def _cite(cp: CheckpointRecord) -> str:
    token = f" token={cp.fencing_token}" if cp.fencing_token is not None else ""
    return (
        f"checkpoint #{cp.sequence}: {cp.state} ({cp.status}) run={cp.run_id}{token} "
        f"at t={cp.created_at:.1f}"
    )


def _legal(workflow: Workflow, a: CheckpointRecord, b: CheckpointRecord) -> bool:
    if a.state == b.state or workflow.legal(a.state, b.state):
        return True
    if b.decision == "restart" and b.state == workflow.initial and b.run_id != a.run_id:
        return True
    transition = workflow.transition_from(a.state)
    if transition is not None and transition.step.gate is not None:
        try:
            return b.state == workflow.gate_state(transition.step.gate)
        except KeyError:
            return False
    return False


def _operator_moves(history: History) -> Counter[str]:
    """The state-moving controls the case's operator applied (a refused one moved nothing)."""
    return Counter(c for c in history.controls_applied if c in MOVING_CONTROLS)


def _moved_by_operator(workflow: Workflow, b: CheckpointRecord, moves: Counter[str]) -> bool:
    """Whether `b` is where one of the operator's unspent controls leads; spends it if so."""
    for control, kind in (("compensate", StepKind.COMPENSATE), ("request-approval", None)):
        if not moves[control]:
            continue
        if kind is None:
            leads = b.status == "waiting_approval" and any(
                t.step.kind is StepKind.APPROVAL and t.source == b.state
                for t in workflow.transitions
            )
        else:
            leads = any(t.step.kind is kind and t.source == b.state for t in workflow.transitions)
        if leads:
            moves[control] -= 1
            return True
    return False


def _broken_link(
    workflow: Workflow, a: CheckpointRecord, b: CheckpointRecord, moves: Counter[str]
) -> str | None:
    """What is wrong between two consecutive committed checkpoints, if anything."""
    if b.sequence == a.sequence:
        return f"checkpoint #{a.sequence} committed twice"
    if b.sequence != a.sequence + 1:
        return f"gap between #{a.sequence} and #{b.sequence}"
    old, new = a.fencing_token, b.fencing_token
    if old is not None and new is not None and new < old:
        return (
            f"fork: #{b.sequence} was written under an older fencing token than "
            f"#{a.sequence} (a stale worker overwrote a newer one's lineage)"
        )
    if b.created_at < a.created_at:
        return f"#{b.sequence} is older than #{a.sequence}: history was rewritten"
    # an untrusted checkpoint shows only its row, not the lineage decision it claims
    descends = b.decision in ("branch", "restart", "migrate") and b.parent_run_id == a.run_id
    if b.trusted and b.run_id != a.run_id and not descends:
        return (
            f"fork: #{b.sequence} belongs to run {b.run_id}, which does not descend from {a.run_id}"
        )
    trusted = a.trusted and b.trusted
    if trusted and not _legal(workflow, a, b) and not _moved_by_operator(workflow, b, moves):
        return f"illegal transition {a.state} → {b.state}"
    return None


def check_sequence(history: History, workflow: Workflow) -> Verdict:
    if not history.readable:
        return unknown(NAME, "the engine exposes no history reader: its lineage is not visible")
    cps = sorted(history.checkpoints, key=lambda c: c.sequence)
    if not cps:
        return unknown(NAME, "the engine's history reader shows no checkpoint of this run")
    first = max(1, history.compacted_below)
    if cps[0].sequence != first:
        return violated(
            NAME,
            f"lineage starts at #{cps[0].sequence}, not #{first}",
            [_cite(cps[0])],
            _refs(cps[0]),
        )
    moves = _operator_moves(history)
    for a, b in itertools.pairwise(cps):
        problem = _broken_link(workflow, a, b, moves)
        if problem is not None:
            return violated(NAME, problem, [_cite(a), _cite(b)], _refs(a, b))
    return ok(NAME, f"#{cps[0].sequence}..#{cps[-1].sequence}, every transition legal")
