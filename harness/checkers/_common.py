"""Small helpers shared by the checkers: how to cite the evidence, how to answer, and how a
ledger row is related to the deliveries the services journaled for it."""

from __future__ import annotations

from killpoint.contract.records import EffectRecord
from killpoint.fake_services.faults import OPERATIONS
from killpoint.fake_services.journal import AppliedEffect, RequestRecord, fingerprint
from killpoint.harness.checkers.ground_truth import MUTATIONS, is_mutation
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef, Verdict

__all__ = [
    "MUTATIONS",
    "READABLE",
    "cite_effect",
    "cite_record",
    "cite_request",
    "ended_as",
    "is_mutation",
    "mutations",
    "ok",
    "related",
    "request_refs",
    "unknown",
    "violated",
]

# Services that offer a read of what they did (a GET in the services' table). An effect of any
# other service cannot be looked up: when its response is lost, so is its outcome.
READABLE = frozenset(service for method, _, service, _ in OPERATIONS if method == "GET")


def mutations(history: History) -> list[RequestRecord]:
    """Every delivery that could change the world, in journal order."""
    return [r for r in history.requests if is_mutation(r)]


def related(record: EffectRecord, sends: list[RequestRecord]) -> list[RequestRecord]:
    """The deliveries of one ledger row, as the services journaled them, without knowing its
    adapter: those of its service that carry its idempotency key; where none does (a service
    that takes no key, or an engine that sent another one), those whose business key is one
    of its arguments (a slug, a ref, an order id, a content address), only those of the
    row's own operation where the service names it as the intent does (a file's write and its
    delete share the file's name); failing that, those whose body is its arguments as they are
    (the services' own fingerprint of them)."""
    own = [r for r in sends if r.service == record.service]
    keyed = [r for r in own if r.idempotency_key == record.idempotency_key]
    if keyed:
        return keyed
    values = {v for v in record.args.values() if isinstance(v, str)}
    named = [r for r in own if r.business_key is not None and r.business_key in values]
    same = [r for r in named if r.operation == record.intent.partition("#")[0]]
    if same or named:
        return same or named
    body = fingerprint(record.args)
    return [r for r in own if r.fingerprint == body]


def cite_request(request: RequestRecord) -> str:
    key = request.business_key or "-"
    idem = request.idempotency_key
    idem_text = f" key={idem}" if idem else ""
    return (
        f"journal #{request.seq}: {request.service}.{request.operation} "
        f"[{key}]{idem_text} at t={request.time:.1f} → {request.outcome}"
    )


def cite_effect(effect: AppliedEffect) -> str:
    idem = effect.idempotency_key
    idem_text = f" key={idem}" if idem else ""
    return (
        f"applied #{effect.seq}: {effect.service}.{effect.operation} "
        f"[{effect.business_key}]{idem_text} → {effect.resource_id}"
    )


def cite_record(record: EffectRecord) -> str:
    return (
        f"ledger {record.operation_id} ({record.service}, key={record.idempotency_key}): "
        f"{record.status.value}, {record.attempts} attempt(s) spent"
    )


def request_refs(requests: list[RequestRecord]) -> list[EvidenceRef]:
    return [EvidenceRef(kind="request", index=r.seq) for r in requests]


def ended_as(history: History, *statuses: str) -> bool | None:
    """Whether the run ended in one of `statuses`: True when the engine's durable records say
    so, or when a worker said so (its word convicts, never acquits: what it told whoever
    delivered the work is held against it); False when the durable records say otherwise;
    None when nothing durable shows its end (no history reader) and no worker said so."""
    words = {history.claimed_status, None if history.readable else history.final_status}
    if history.durable_status in statuses or words & set(statuses):
        return True
    return False if history.readable else None


def ok(name: str, summary: str = "") -> Verdict:
    return Verdict(checker=name, valid=True, summary=summary)


def unknown(name: str, summary: str) -> Verdict:
    return Verdict(checker=name, valid="unknown", summary=summary)


def violated(
    name: str, summary: str, evidence: list[str], refs: list[EvidenceRef] | None = None
) -> Verdict:
    return Verdict(checker=name, valid=False, summary=summary, evidence=evidence, refs=refs or [])
