"""Monotonic sequence: committed checkpoints are 1..n with no gap, duplicate or fork, and
every step from one to the next is a legal transition of the workflow."""

from __future__ import annotations

import itertools

from killpoint.harness.checkers._common import ok, violated
from killpoint.harness.contract.workflow import Workflow
from killpoint.harness.history import History
from killpoint.harness.protocol import CheckpointRecord
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "monotonic_sequence"


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


def check_sequence(history: History, workflow: Workflow) -> Verdict:
    cps = sorted(history.checkpoints, key=lambda c: c.sequence)
    if not cps:
        return ok(NAME, "no checkpoint")
    first = max(1, history.compacted_below)
    if cps[0].sequence != first:
        return violated(
            NAME,
            f"lineage starts at #{cps[0].sequence}, not #{first}",
            [_cite(cps[0])],
            _refs(cps[0]),
        )
    for a, b in itertools.pairwise(cps):
        if b.sequence == a.sequence:
            return violated(
                NAME, f"checkpoint #{a.sequence} committed twice", [_cite(a), _cite(b)], _refs(a, b)
            )
        if b.sequence != a.sequence + 1:
            return violated(
                NAME,
                f"gap between #{a.sequence} and #{b.sequence}",
                [_cite(a), _cite(b)],
                _refs(a, b),
            )
        if (
            a.fencing_token is not None
            and b.fencing_token is not None
            and b.fencing_token < a.fencing_token
        ):
            return violated(
                NAME,
                f"fork: #{b.sequence} was written under an older fencing token than "
                f"#{a.sequence} (a stale worker overwrote a newer one's lineage)",
                [_cite(a), _cite(b)],
                _refs(a, b),
            )
        if b.created_at < a.created_at:
            return violated(
                NAME,
                f"#{b.sequence} is older than #{a.sequence}: history was rewritten",
                [_cite(a), _cite(b)],
                _refs(a, b),
            )
        # an untrusted checkpoint shows only its row, not the lineage decision it claims
        if (
            b.trusted
            and b.run_id != a.run_id
            and not (b.decision in ("branch", "restart") and b.parent_run_id == a.run_id)
        ):
            return violated(
                NAME,
                f"fork: #{b.sequence} belongs to run {b.run_id}, which does "
                f"not descend from {a.run_id}",
                [_cite(a), _cite(b)],
                _refs(a, b),
            )
        if a.trusted and b.trusted and not _legal(workflow, a, b):
            return violated(
                NAME, f"illegal transition {a.state} → {b.state}", [_cite(a), _cite(b)], _refs(a, b)
            )
    return ok(NAME, f"#{cps[0].sequence}..#{cps[-1].sequence}, every transition legal")
