"""Intent applied: what a service applied is the intent its ledger recorded, and one key never
carries two bodies or two argument sets.

The journal keeps a fingerprint of each body, the ledger the intent's arguments; the harness
does not know how each adapter turns one into the other, so it compares only what is
comparable, by these rules:

- journal alone, any engine: one idempotency key is never delivered with two different bodies
  (a retry under a key is the same request again, or another operation wearing its key);
- ledger alone: one idempotency key never names two argument sets;
- ledger against journal, for each row with deliveries (`related` to it): where the body *is*
  its arguments (the services' fingerprint of the arguments is a delivery's) or is addressed
  by them (the delivery's fingerprint is one of its arguments: a content-addressed upload),
  every delivery must carry that body; where the row keeps a receipt — the service's own
  account of what it applied — each field the receipt and the arguments both name must hold
  the argument's value. A row with deliveries that neither comparison reaches is unknown.

Without a history reader only the journal half judges; the rest is unknown.
"""

from __future__ import annotations

from collections import defaultdict

from killpoint.contract.records import EffectRecord
from killpoint.contract.workflow import Workflow
from killpoint.fake_services.journal import RequestRecord, fingerprint
from killpoint.harness.checkers._common import (
    cite_record,
    cite_request,
    mutations,
    ok,
    related,
    request_refs,
    unknown,
    violated,
)
from killpoint.harness.history import History
from killpoint.harness.results import Verdict

NAME = "intent_applied"


def check_intent(history: History, workflow: Workflow) -> Verdict:
    sends = mutations(history)
    reused = _key_with_two_bodies(sends)
    if reused is not None:
        return reused
    if not history.readable:
        return unknown(NAME, "the engine exposes no history reader: its intents are not visible")
    if not history.ledger:
        return unknown(NAME, "the engine keeps no effect ledger: its intents are its own")
    renamed = _key_with_two_intents(history.effects)
    if renamed is not None:
        return renamed
    blind: list[str] = []
    for record in history.effects:
        seen = related(record, sends)
        problem = _other_body(record, seen) or _receipt_disagrees(record)
        if problem is not None:
            return problem
        if seen and not (_body_known(record, seen) or _receipt_fields(record)):
            blind.append(record.operation_id)
    if blind:
        return unknown(NAME, f"nothing of {blind[0]}'s delivery is comparable with its intent")
    return ok(NAME, f"{len(history.effects)} ledger row(s), each applied as recorded")


def _key_with_two_bodies(sends: list[RequestRecord]) -> Verdict | None:
    first: dict[tuple[str, str], RequestRecord] = {}
    for r in sends:
        if r.idempotency_key is None:
            continue
        seen = first.setdefault((r.service, r.idempotency_key), r)
        if seen.fingerprint != r.fingerprint:
            return violated(
                NAME,
                f"one idempotency key reached {r.service} with two different bodies",
                [cite_request(seen), cite_request(r)],
                request_refs([seen, r]),
            )
    return None


def _key_with_two_intents(records: list[EffectRecord]) -> Verdict | None:
    by_key: dict[str, list[EffectRecord]] = defaultdict(list)
    for record in records:
        by_key[record.idempotency_key].append(record)
    for rows in by_key.values():
        if any(r.args != rows[0].args for r in rows[1:]):
            return violated(
                NAME,
                "one idempotency key names two argument sets in the ledger",
                [cite_record(r) for r in rows[:2]],
            )
    return None


def _body_known(record: EffectRecord, seen: list[RequestRecord]) -> str | None:
    """The body the row's arguments make, where a delivery shows how its adapter sends them."""
    own = fingerprint(record.args)
    addresses = {v for v in record.args.values() if isinstance(v, str)}
    return next(
        (r.fingerprint for r in seen if r.fingerprint == own or r.fingerprint in addresses), None
    )


def _other_body(record: EffectRecord, seen: list[RequestRecord]) -> Verdict | None:
    body = _body_known(record, seen)
    odd = next((r for r in seen if body is not None and r.fingerprint != body), None)
    if odd is None:
        return None
    return violated(
        NAME,
        f"{record.operation_id} was delivered with a body other than its recorded intent",
        [cite_record(record), cite_request(odd)],
        request_refs([odd]),
    )


def _receipt_fields(record: EffectRecord) -> list[str]:
    """The fields the row's receipt and its arguments both name."""
    detail = record.receipt.detail if record.receipt is not None else {}
    return sorted(set(detail) & set(record.args))


def _receipt_disagrees(record: EffectRecord) -> Verdict | None:
    receipt = record.receipt
    for name in _receipt_fields(record):
        assert receipt is not None
        applied, meant = receipt.detail[name], record.args[name]
        if applied != meant:
            return violated(
                NAME,
                f"{record.operation_id}: the service applied {name}={applied!r}; the intent "
                f"recorded {name}={meant!r}",
                [cite_record(record), f"receipt {receipt.resource_id}: {name}={applied!r}"],
            )
    return None
