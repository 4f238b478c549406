"""Isolation: nothing of one run crosses over to another run in the same world.

A run's neighbours (`FaultSchedule.neighbours`: a second tenant with the same business keys,
another workflow of the same tenant) share its store, services, clock and approval inbox. The
harness signs every request with its sender's origin and the services journal it, so each
request and each effect is known to be one run's (`harness.run.neighbours`). The run and each
neighbour are parties, and the checker objects when, for any two of them:

- a request of one carries the idempotency key of another's (the service dedups the second
  onto the first: one customer charged once for two orders);
- one's ledger receipt names a resource another's request created (a lookup found a
  neighbour's object and took it for its own), an object named by its own content aside;
- one's checkpoint carries an approval granted to another (an approver's answer applied to
  another tenant's or workflow's run: the approvers of each party are people of its own);
- one ended complete while an effect it expects was applied only under another's origin (a
  neighbour's too: the run harmed it).

The journal halves judge any engine. The ledger and approval halves need the engine's records:
without them (no reader, no ledger) the checker answers unknown when nothing else objects, and
so it does when a request nobody signed leaves the journal unattributed, and when a neighbour,
fault-free, failed or did not end as its scenario expects: the run may have harmed it, or the
engine ends so even alone (its fault-free recording says which, and `progress` judges that). A
run without neighbours shares its world with nobody: true.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from killpoint.contract.records import ApprovalRecord, EffectRecord
from killpoint.contract.workflow import Workflow
from killpoint.fake_services.journal import AppliedEffect, RequestRecord
from killpoint.harness.checkers._common import cite_effect, cite_request, ok, unknown, violated
from killpoint.harness.checkers.ground_truth import content_addressed
from killpoint.harness.history import ExpectedEffectRecord, History
from killpoint.harness.protocol import ANY_WORKFLOW, CheckpointRecord
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "isolation"


@dataclass(frozen=True)
class Party:
    """The run, or one of its neighbours, as the checker compares them."""

    name: str
    main: bool
    requests: Sequence[RequestRecord]
    applied: Sequence[AppliedEffect]
    effects: Sequence[EffectRecord]
    checkpoints: Sequence[CheckpointRecord]
    approvals: Sequence[ApprovalRecord]
    expected: Sequence[ExpectedEffectRecord]
    final_status: str
    expected_status: str
    readable: bool
    ledger: bool
    failures: Sequence[str] = ()


def parties(history: History) -> list[Party]:
    """The run first, then each neighbour that ran, in the schedule's order."""
    found = [
        Party(
            name=f"the run ({history.workflow_id})",
            main=True,
            requests=history.requests,
            applied=history.applied,
            effects=history.effects,
            checkpoints=history.checkpoints,
            approvals=history.approvals,
            expected=history.expected,
            final_status=history.final_status,
            expected_status=history.expected_status,
            readable=history.readable,
            ledger=history.ledger,
        )
    ]
    found += [
        Party(
            name=f"{n.kind} neighbour {n.tenant}/{n.workflow_id}",
            main=False,
            requests=n.requests,
            applied=n.applied,
            effects=n.effects,
            checkpoints=n.checkpoints,
            approvals=n.approvals,
            expected=n.expected,
            final_status=n.final_status,
            expected_status=n.expected_status,
            readable=n.readable,
            ledger=n.ledger,
            failures=[f"{f.where}: {f.error}" for f in n.failures],
        )
        for n in history.neighbours
    ]
    return found


def check_isolation(history: History, workflow: Workflow) -> Verdict:
    if not history.neighbours:
        return ok(NAME, "no neighbour shared the run's world")
    if ANY_WORKFLOW in history.lacks:
        return unknown(
            NAME,
            "the engine's workers run whatever workflow their backend hands them: a request's "
            "sender is not the run it served",
        )
    unsigned = [r for r in history.requests if r.origin is None]
    if unsigned:
        return unknown(
            NAME,
            f"{len(unsigned)} request(s) carry no origin (the engine's own client?): whose "
            f"they were cannot be told, first {cite_request(unsigned[0])}",
        )
    everyone = parties(history)
    for half in (_shared_key, _foreign_receipt, _foreign_approval, _done_elsewhere):
        found = half(everyone)
        if found is not None:
            return found
    harmed = _harmed(everyone)
    if harmed is not None:
        return unknown(NAME, harmed)
    blind = [p.name for p in everyone if not (p.readable and p.ledger)]
    if blind:
        return unknown(
            NAME,
            f"the journals show no crossing, but the ledger or approvals of {blind[0]} are not "
            "visible: a receipt or an approval taken from a neighbour would not show",
        )
    return ok(NAME, f"{len(everyone) - 1} neighbour(s), nothing crossed over")


def _refs(
    party: Party, kind: Literal["request", "effect", "checkpoint"], indexes: Sequence[int]
) -> list[EvidenceRef]:
    """Evidence refs point into the run's own records: a neighbour's are cited in words."""
    return [EvidenceRef(kind=kind, index=i) for i in indexes] if party.main else []


def _shared_key(everyone: Sequence[Party]) -> Verdict | None:
    """Two parties' requests under one idempotency key, the earliest pair; but two requests
    for one object named by its content (an artifact's sha256), which is the same object
    whoever asks, and may well be keyed by its content."""
    same = {
        (e.service, e.business_key) for p in everyone for e in p.applied if content_addressed(e)
    }
    sent = sorted(
        (
            (r, p)
            for p in everyone
            for r in p.requests
            if r.idempotency_key and (r.service, r.business_key) not in same
        ),
        key=lambda x: x[0].seq,
    )
    first: dict[str, tuple[RequestRecord, Party]] = {}
    for request, party in sent:
        key = request.idempotency_key or ""
        earlier = first.setdefault(key, (request, party))
        if earlier[1] is not party:
            return violated(
                NAME,
                f"{party.name} sent under the idempotency key of {earlier[1].name}: the "
                "service takes the second for a retry of the first",
                [
                    f"{earlier[1].name}: {cite_request(earlier[0])}",
                    f"{party.name}: {cite_request(request)}",
                ],
                _refs(earlier[1], "request", [earlier[0].seq])
                + _refs(party, "request", [request.seq]),
            )
    return None


def _makers(everyone: Sequence[Party]) -> dict[tuple[str, str], tuple[Party, AppliedEffect]]:
    return {
        (e.service, e.resource_id): (p, e)
        for p in everyone
        for e in p.applied
        if not content_addressed(e)
    }


def _foreign_receipt(everyone: Sequence[Party]) -> Verdict | None:
    """A ledger receipt naming a resource only another party's request created."""
    makers = _makers(everyone)
    for party in everyone:
        own = {(e.service, e.resource_id) for e in party.applied}
        for record in party.effects:
            if record.receipt is None:
                continue
            where = (record.service, record.receipt.resource_id)
            maker = makers.get(where)
            if maker is None or maker[0] is party or where in own:
                continue
            return violated(
                NAME,
                f"{party.name} took {record.service} {record.receipt.resource_id}, which "
                f"{maker[0].name} created, for the result of its own {record.operation_id}",
                [
                    f"{party.name}: ledger {record.operation_id} ({record.status.value}) "
                    f"receipt {record.receipt.resource_id}",
                    f"{maker[0].name}: {cite_effect(maker[1])}",
                ],
                _refs(maker[0], "effect", [maker[1].seq]),
            )
    return None


def _granted(party: Party) -> set[tuple[str, str]]:
    return {(a.gate, a.actor) for a in party.approvals if a.status == "granted" and a.actor}


def _foreign_approval(everyone: Sequence[Party]) -> Verdict | None:
    """A checkpoint carrying an approval that another party's approver gave."""
    granted = {id(p): _granted(p) for p in everyone}
    for party in everyone:
        for cp in party.checkpoints:
            for gate, actor in _approvals_in(cp):
                if (gate, actor) in granted[id(party)]:
                    continue
                giver = next((p for p in everyone if (gate, actor) in granted[id(p)]), None)
                if giver is None or giver is party:
                    continue
                return violated(
                    NAME,
                    f"{party.name} went on at gate {gate!r} under the approval {actor} gave "
                    f"{giver.name}",
                    [
                        f"{party.name}: checkpoint #{cp.sequence} ({cp.state}) carries the "
                        f"approval of {gate!r} by {actor}",
                        f"{giver.name}: {gate!r} granted by {actor}; {party.name} holds no "
                        "such approval of its own",
                    ],
                    _refs(party, "checkpoint", [cp.sequence]),
                )
    return None


def _approvals_in(cp: CheckpointRecord) -> Iterator[tuple[str, str]]:
    for approval in cp.approvals if cp.trusted else ():
        gate, actor = approval.get("gate"), approval.get("actor")
        if isinstance(gate, str) and isinstance(actor, str):
            yield gate, actor


def _matches(effect: AppliedEffect, expected: ExpectedEffectRecord) -> bool:
    return (
        effect.service == expected.service
        and effect.business_key == expected.business_key
        and expected.operation in (None, effect.operation)
    )


def _done_elsewhere(everyone: Sequence[Party]) -> Verdict | None:
    """A party done while one of its expected effects exists only under another's origin."""
    for party in everyone:
        done = party.final_status == "completed" or (
            party.final_status == "compensated" == party.expected_status
        )
        for expected in party.expected if done else ():
            if any(_matches(e, expected) for e in party.applied):
                continue
            theirs = [
                (p, e)
                for p in everyone
                if p is not party
                for e in p.applied
                if _matches(e, expected) and not content_addressed(e)
            ]
            if theirs:
                other, effect = theirs[0]
                return violated(
                    NAME,
                    f"{party.name} ended {party.final_status}, but its {expected.service} "
                    f"[{expected.business_key}] was applied only by {other.name}",
                    [
                        f"{party.name}: no {expected.service} [{expected.business_key}] of its "
                        "own in the journal",
                        f"{other.name}: {cite_effect(effect)}",
                    ],
                    _refs(other, "effect", [effect.seq]),
                )
    return None


def _harmed(everyone: Sequence[Party]) -> str | None:
    """Why a neighbour may have been harmed: it failed, or ended otherwise than its scenario
    expects, though no fault touched it."""
    for party in everyone:
        if party.main:
            continue
        if party.failures:
            return f"{party.name} failed beside the run ({party.failures[0]}): harm, or its own?"
        if party.final_status != party.expected_status:
            return (
                f"{party.name} ended {party.final_status}, not {party.expected_status}, without "
                "a fault: harmed by the run, or the engine's end even alone?"
            )
    return None
