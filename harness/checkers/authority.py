"""Authority: no high-impact call after its approval expired, and nothing done on the strength
of a tampered, wrong-tenant or unsupported checkpoint."""

from __future__ import annotations

from killpoint.harness.checkers._common import (
    cite_request,
    is_mutation,
    ok,
    request_refs,
    unknown,
    violated,
)
from killpoint.harness.contract.workflow import Workflow
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "authority"
# Tampering the loader must refuse; a legacy checkpoint that migrates cleanly is not one.
UNTRUSTED = frozenset(
    {"flip_byte", "wrong_tenant", "unsupported_schema", "legacy_unsafe", "output_altered"}
)


def check_authority(history: History, workflow: Workflow) -> Verdict:
    gated = {(e.service, e.business_key): e.gate for e in history.expected if e.gate}
    for request in history.requests:
        gate = gated.get((request.service, request.business_key or ""))
        if gate is None or not is_mutation(request):
            continue
        t = request.time
        grants = [g for g in history.grants if g.gate == gate]
        if not any(g.time <= t < g.expires_at for g in grants):
            latest = max(grants, key=lambda g: g.time, default=None)
            why = (
                f"approval {gate!r} granted at t={latest.time:.1f} expired at "
                f"t={latest.expires_at:.1f}"
                if latest
                else f"no approval {gate!r} granted"
            )
            return violated(
                NAME,
                f"high-impact call without valid authority: {why}",
                [why, cite_request(request)],
                request_refs([request]),
            )
    for tamper in history.staged:
        if tamper.kind not in UNTRUSTED or tamper.sequence is None:
            continue
        acted = [
            r for r in history.requests if r.seq > tamper.journal_seq and is_mutation(r)
        ]
        built = [c for c in history.checkpoints if c.sequence > tamper.sequence]
        if acted or built:
            evidence = [
                f"checkpoint #{tamper.sequence} was altered ({tamper.kind}) after "
                f"worker {tamper.after_worker}"
            ]
            evidence += [cite_request(r) for r in acted[:1]]
            evidence += [f"checkpoint #{c.sequence} ({c.state}) built on it" for c in built[:1]]
            refs = request_refs(acted[:1]) + [
                EvidenceRef(kind="checkpoint", index=c.sequence) for c in built[:1]
            ]
            return violated(
                NAME, f"the run went on from a {tamper.kind} checkpoint", evidence, refs
            )
    unstaged = [t.kind for t in history.tampered if not t.applied and t.kind in UNTRUSTED]
    if unstaged:
        return unknown(NAME, f"the engine under test cannot stage {', '.join(unstaged)}")
    return ok(NAME)
