"""Authority: no high-impact call after its approval expired or beyond what it approved, and
nothing done on the strength of a tampered, wrong-tenant or unsupported checkpoint.

The approval half reads the services' journal and the grants the harness gave, so it judges
any engine: each gated call must fall inside a grant's time, and inside what that grant covered
(`GrantRecord.covered`, from the gate's `GatePolicy.covers`): an amount no higher than the
approved one, a target or scope equal to it. That half is unknown where the gate declares no
coverage or the journal holds no body for the call.

The tamper half needs its premise: a tampering the engine could not stage is unknown, and so
is one it staged when its checkpoints are not visible and nothing after the tampering (a
request, or a step's boundary reached) proves it acted on it. Which kinds the loader must
refuse is the tamper table's to say (`killpoint.harness.tampering`).
"""

from __future__ import annotations

import json
from typing import TypeGuard

from pydantic import JsonValue

from killpoint.contract.workflow import Workflow
from killpoint.harness.checkers._common import (
    cite_request,
    is_mutation,
    ok,
    request_refs,
    unknown,
    violated,
)
from killpoint.harness.history import History, TamperRecord
from killpoint.harness.results import EvidenceRef, Verdict
from killpoint.harness.tampering import TAMPER_KINDS, refused

NAME = "authority"
# Tampering the loader must refuse, as the table says; a legacy checkpoint that migrates
# cleanly is not one. Kinds registered later are judged by `refused`, read at each check.
UNTRUSTED = frozenset(k.name for k in TAMPER_KINDS.values() if k.refused)


def check_authority(history: History, workflow: Workflow) -> Verdict:
    expired = _expired_approval(history)
    if expired is not None:
        return expired
    beyond, unjudged = beyond_approval(history)
    if beyond is not None:
        return beyond
    judged = [t for t in history.tampered if refused(t.kind)]
    for tamper in judged:
        went_on = _went_on_from(history, tamper) if tamper.applied else None
        if went_on is not None:
            return went_on
    unstaged = [t.kind for t in judged if not t.applied]
    if unstaged:
        return unknown(NAME, f"the engine under test cannot stage {', '.join(unstaged)}")
    unseen = [t for t in judged if not history.readable or t.sequence is None]
    if unseen:
        return unknown(
            NAME,
            f"the store was tampered with ({unseen[0].kind}) and no request after it shows the "
            "engine acted on it, but the engine's checkpoints are not visible",
        )
    if unjudged is not None:
        return unknown(NAME, unjudged)
    return ok(NAME)


def _expired_approval(history: History) -> Verdict | None:
    """The first gated call made without a valid approval, if any."""
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
    return None


def beyond_approval(history: History) -> tuple[Verdict | None, str | None]:
    """The first gated call outside what its approval covered, or why one cannot be judged."""
    gated = {(e.service, e.business_key): e.gate for e in history.expected if e.gate}
    unjudged = None
    for request in history.requests:
        gate = gated.get((request.service, request.business_key or ""))
        if gate is None or not is_mutation(request):
            continue
        valid = [g for g in history.grants if g.gate == gate and g.time <= request.time]
        grant = max(valid, key=lambda g: g.time, default=None)
        if grant is None:
            continue  # judged by the expiry half
        if grant.covered is None:
            unjudged = unjudged or f"gate {gate!r} declares nothing its approval covers"
            continue
        body = json.loads(request.body) if request.body is not None else None
        if not isinstance(body, dict) or not set(grant.covered) <= set(body):
            unjudged = unjudged or f"{cite_request(request)}: no body to judge against the approval"
            continue
        for name, approved in grant.covered.items():
            if not _within(body[name], approved):
                why = f"{name}={body[name]!r}, approved {approved!r} ({gate!r})"
                return violated(
                    NAME,
                    f"high-impact call beyond what its approval covered: {why}",
                    [f"approval {gate!r} granted at t={grant.time:.1f} covered {grant.covered}",
                     f"{cite_request(request)} sent {name}={body[name]!r}"],
                    request_refs([request]),
                ), None  # fmt: skip
    return None, unjudged


def _within(sent: JsonValue, approved: JsonValue) -> bool:
    """A number at most the approved one; anything else (a target, a scope) equal to it."""
    if _number(sent) and _number(approved):
        return sent <= approved
    return sent == approved


def _number(value: JsonValue) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _went_on_from(history: History, tamper: TamperRecord) -> Verdict | None:
    """A call, a checkpoint or a step begun after a staged tampering the engine should have
    refused (a step's boundary, not the lease: an engine may take the lease, then refuse)."""
    acted = [r for r in history.requests if r.seq > tamper.journal_seq and is_mutation(r)]
    altered = tamper.sequence
    built = [c for c in history.checkpoints if altered is not None and c.sequence > altered]
    began = [
        i
        for i, h in enumerate(history.hits)
        if h.worker > tamper.after_worker and h.step is not None
    ]
    if not (acted or built or began):
        return None
    evidence = [
        f"checkpoint #{altered} was altered ({tamper.kind}) after worker {tamper.after_worker}"
    ]
    evidence += [cite_request(r) for r in acted[:1]]
    evidence += [f"checkpoint #{c.sequence} ({c.state}) built on it" for c in built[:1]]
    hits = [history.hits[i] for i in began[:1]]
    evidence += [f"worker {h.worker} went on to {h.label()}" for h in hits]
    refs = request_refs(acted[:1]) + [
        EvidenceRef(kind="checkpoint", index=c.sequence) for c in built[:1]
    ]
    refs += [EvidenceRef(kind="hit", index=i) for i in began[:1]]
    return violated(NAME, f"the run went on from a {tamper.kind} checkpoint", evidence, refs)
