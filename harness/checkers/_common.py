"""Small readers shared by the checkers: which requests mutate, how to cite them."""

from __future__ import annotations

from typing import Any

from killpoint.fake_services.faults import OPERATIONS
from killpoint.harness.results import EvidenceRef, Verdict

# Operations that change the world, by service; everything else is a read. Derived from the
# services' own table of operations: a write is any request that is not a GET.
MUTATIONS = frozenset(
    (service, operation) for method, _, service, operation in OPERATIONS if method != "GET"
)


def is_mutation(request: dict[str, Any]) -> bool:
    return (request["service"], request["operation"]) in MUTATIONS


def cite_request(request: dict[str, Any]) -> str:
    key = request.get("business_key") or "-"
    idem = request.get("idempotency_key")
    idem_text = f" key={idem[:14]}…" if idem else ""
    return (
        f"journal #{request['seq']}: {request['service']}.{request['operation']} "
        f"[{key}]{idem_text} at t={request['time']:.1f} → {request['outcome']}"
    )


def cite_effect(effect: dict[str, Any]) -> str:
    idem = effect.get("idempotency_key")
    idem_text = f" key={idem[:14]}…" if idem else ""
    return (
        f"applied #{effect['seq']}: {effect['service']}.{effect['operation']} "
        f"[{effect['business_key']}]{idem_text} → {effect['resource_id']}"
    )


def request_refs(requests: list[dict[str, Any]]) -> list[EvidenceRef]:
    return [EvidenceRef(kind="request", index=int(r["seq"])) for r in requests]


def ok(name: str, summary: str = "") -> Verdict:
    return Verdict(checker=name, valid=True, summary=summary)


def unknown(name: str, summary: str) -> Verdict:
    return Verdict(checker=name, valid="unknown", summary=summary)


def violated(
    name: str, summary: str, evidence: list[str], refs: list[EvidenceRef] | None = None
) -> Verdict:
    return Verdict(checker=name, valid=False, summary=summary, evidence=evidence, refs=refs or [])
