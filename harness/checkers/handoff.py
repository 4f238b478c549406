"""Handoff terms: nothing is acted on after a handoff's terms expired, and nothing on a handoff
the receiver never accepted.

A handoff (seed 000: "record the handoff contract: input artifact, expected output schema,
deadline, permissions, and ownership") shows in the history as the boundaries its steps
declare — `handoff.sent` when the contract is written, `handoff.accepted` when the receiver
has checked it — and as the receiving step's output, which carries the contract's `deadline`
on the world clock. Against those: every acceptance comes before the deadline, and every write
to a service after the handoff was sent follows an acceptance and comes before the deadline
(work delivered on expired terms is acted on all the same).

A receiver that checks the deadline only when it accepts publishes late after a pause longer
than the terms between acceptance and publication: false (the reference checks a step's terms,
`Step.expires`, again before every send, as it does approvals). No handoff boundary: nothing
was handed off, true. An acceptance whose terms are not visible (no history reader, or no
trusted checkpoint carries the receiving step's output with a deadline) is unknown, unless the
journal already proves a write on a handoff never accepted.
"""

from __future__ import annotations

from killpoint.contract.boundaries import HANDOFF_ACCEPTED, HANDOFF_SENT
from killpoint.contract.workflow import Workflow
from killpoint.harness.checkers._common import (
    cite_request,
    mutations,
    ok,
    request_refs,
    unknown,
    violated,
)
from killpoint.harness.history import History, HitRecord
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "handoff_terms"


def check_handoff(history: History, workflow: Workflow) -> Verdict:
    sent = [h for h in history.hits if h.boundary == HANDOFF_SENT]
    accepted = [h for h in history.hits if h.boundary == HANDOFF_ACCEPTED]
    if not sent and not accepted:
        return ok(NAME, "no handoff in this run")
    after = [r for r in mutations(history) if not sent or r.seq > sent[0].journal_seq]
    first_accept = min((h.journal_seq for h in accepted), default=None)
    unaccepted = [r for r in after if sent and (first_accept is None or r.seq <= first_accept)]
    if unaccepted:
        return violated(
            NAME,
            "a service was written to on a handoff the receiver had not accepted",
            [f"handoff sent at t={sent[0].time:.1f}", cite_request(unaccepted[0])],
            request_refs(unaccepted[:1]),
        )
    if not accepted:
        return ok(NAME, "the handoff was not accepted, and nothing was done on it")
    deadline = handoff_deadline(history, {h.step for h in accepted if h.step})
    if deadline is None:
        return unknown(NAME, "the handoff's terms (its deadline) are not visible")
    late = next((h for h in accepted if h.time >= deadline), None)
    if late is not None:
        return violated(
            NAME,
            f"the handoff was accepted at t={late.time:.1f}, after its deadline t={deadline:.1f}",
            [f"deadline t={deadline:.1f}", _cite_hit(late)],
            [EvidenceRef(kind="hit", index=history.hits.index(late))],
        )
    acted = next((r for r in after if r.time >= deadline), None)
    if acted is not None:
        return violated(
            NAME,
            f"acted on the handoff at t={acted.time:.1f}, after its deadline t={deadline:.1f}",
            [f"deadline t={deadline:.1f}", cite_request(acted)],
            request_refs([acted]),
        )
    return ok(NAME, f"accepted and acted on before its deadline t={deadline:.1f}")


def handoff_deadline(history: History, steps: set[str]) -> float | None:
    """The deadline of the contract the receiving step accepted, as the latest trusted
    checkpoint that carries that step's output records it."""
    trusted = [c for c in history.checkpoints if c.trusted]
    for cp in sorted(trusted, key=lambda c: c.sequence, reverse=True):
        for step in sorted(steps & set(cp.outputs)):
            terms = cp.outputs[step]
            deadline = terms.get("deadline") if isinstance(terms, dict) else None
            if isinstance(deadline, int | float) and not isinstance(deadline, bool):
                return float(deadline)
    return None


def _cite_hit(hit: HitRecord) -> str:
    return f"worker {hit.worker}: {hit.label()} at t={hit.time:.1f}"
