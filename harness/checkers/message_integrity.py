"""Message integrity: a start message that lied is ignored or rejected, never acted on.

Seed 000: "Validated input snapshot — preserve the approved request" (recovery must not
"silently use changed input"), and "redelivery is normal: use durable state to decide whether
the message is still actionable". The schedule's lies (`harness.lies`) each leave a record
with the values only the lie holds (`LieRecord.marks`: an amount raised, a target renamed,
another workflow's or tenant's names, a forged approver). None of them may show up after the
lie in what the run did or kept:

- a request: its body (the journal's canonical JSON) or its business key;
- the engine's durable input, or an output derived from it, in any trusted checkpoint;
- an approval the engine holds (its table or a checkpoint's): an approval is a person's
  answer to the harness's grant, never a claim a message makes.

The request half judges any engine; it is unknown for a mutating request whose body the
journal could not keep (bytes). The durable halves need the engine's records: unknown where
its checkpoints do not show their input, or it exposes none.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import JsonValue

from killpoint.contract.workflow import Workflow
from killpoint.fake_services.journal import EMPTY, RequestRecord
from killpoint.harness.checkers._common import (
    cite_request,
    is_mutation,
    ok,
    request_refs,
    unknown,
    violated,
)
from killpoint.harness.history import History, LieRecord
from killpoint.harness.lies import leaves
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "message_integrity"


def check_message_integrity(history: History, workflow: Workflow) -> Verdict:
    told = [lie for lie in history.lies if lie.delivered and lie.marks]
    found = _acted_on(history, told) or _kept(history, told) or _approved(history, told)
    if found is not None:
        return found
    why = _unseen(history, told)
    return ok(NAME) if why is None else unknown(NAME, why)


def _acted_on(history: History, told: Sequence[LieRecord]) -> Verdict | None:
    """The first request after a lie that carries one of its marks."""
    for lie in told:
        for request in history.requests:
            if request.seq <= lie.journal_seq:
                continue
            mark = _carried(_said(request), lie.marks)
            if mark is not None:
                return violated(
                    NAME,
                    f"a request carried what a lying start message ({lie.kind}) said",
                    [_cite(lie), f"{cite_request(request)} carries {mark!r}"],
                    request_refs([request]),
                )
    return None


def _kept(history: History, told: Sequence[LieRecord]) -> Verdict | None:
    """A trusted checkpoint whose input, or an output, holds a lie's mark."""
    for lie in told:
        for cp in history.checkpoints:
            if not cp.trusted:
                continue
            for what, value in (("input", cp.input or {}), ("outputs", cp.outputs)):
                mark = _carried(list(leaves(value)), lie.marks)
                if mark is not None:
                    return violated(
                        NAME,
                        f"the run's durable {what} took what a lying start message ({lie.kind}) "
                        "said",
                        [_cite(lie), f"checkpoint #{cp.sequence} ({cp.state}): {what} hold "
                         f"{mark!r}"],
                        [EvidenceRef(kind="checkpoint", index=cp.sequence)],
                    )  # fmt: skip
    return None


def _approved(history: History, told: Sequence[LieRecord]) -> Verdict | None:
    """An approval the engine holds that a message claimed, or that no grant of the harness
    gave once a message claimed one."""
    granted = {g.gate for g in history.grants}
    claimed = any(lie.kind == "approval" for lie in told)
    for lie in told:
        held = [a.model_dump(mode="json") for a in history.approvals]
        held += [a for cp in history.checkpoints if cp.trusted for a in cp.approvals]
        for approval in held:
            mark = _carried(list(leaves(approval)), lie.marks)
            unasked = claimed and approval.get("status") == "granted"
            if mark is None and not (unasked and approval.get("gate") not in granted):
                continue
            why = f"holds {mark!r}" if mark is not None else "was granted by no one"
            return violated(
                NAME,
                f"an approval was taken from a lying start message ({lie.kind})",
                [_cite(lie), f"approval {approval.get('gate')!r} {why}"],
            )
    return None


def _unseen(history: History, told: Sequence[LieRecord]) -> str | None:
    """Why the lies cannot be judged in full, if they cannot."""
    untold = [lie.kind for lie in history.lies if not lie.delivered]
    if untold:
        return f"this engine cannot take a lie of kind {', '.join(untold)}"
    blank = [lie.kind for lie in history.lies if not lie.marks]
    if blank:
        return f"a lie ({', '.join(blank)}) holds nothing a request or a record could show"
    if not told:
        return None
    first = min(lie.journal_seq for lie in told)
    bytes_sent = [
        r
        for r in history.requests
        if r.seq > first and is_mutation(r) and r.body is None and r.fingerprint != EMPTY
    ]
    if bytes_sent:
        return (
            f"{cite_request(bytes_sent[0])} sent a body the journal does not keep (bytes): "
            "whether it carried a lie is not known"
        )
    if not history.readable or not any(cp.input is not None for cp in history.checkpoints):
        return "the engine's checkpoints do not show its durable input"
    return None


def _said(request: RequestRecord) -> list[JsonValue]:
    """What a request carried: its business key and every value of its JSON body."""
    said: list[JsonValue] = [request.business_key]
    if request.body is not None:
        said += list(leaves(json.loads(request.body)))
    return said


def _carried(values: list[JsonValue], marks: Sequence[str | int]) -> str | int | None:
    """The first mark among `values`: a text inside a text (case aside), or the same whole
    number (a flag or a fraction is no amount)."""
    texts = [v.casefold() for v in values if isinstance(v, str)]
    numbers = {v for v in values if isinstance(v, int) and not isinstance(v, bool)}
    for mark in marks:
        if isinstance(mark, str):
            if any(mark.casefold() in t for t in texts):
                return mark
        elif mark in numbers:
            return mark
    return None


def _cite(lie: LieRecord) -> str:
    return (
        f"a start message of tenant {lie.tenant!r} told worker {lie.worker} a lie ({lie.kind}), "
        f"after journal #{lie.journal_seq}"
    )
