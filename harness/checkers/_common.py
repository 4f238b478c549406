"""Small helpers shared by the checkers: how to cite the evidence, how to answer."""

from __future__ import annotations

from killpoint.fake_services.journal import AppliedEffect, RequestRecord
from killpoint.harness.ground_truth import MUTATIONS, is_mutation
from killpoint.harness.results import EvidenceRef, Verdict

__all__ = [
    "MUTATIONS",
    "cite_effect",
    "cite_request",
    "is_mutation",
    "ok",
    "request_refs",
    "unknown",
    "violated",
]


def cite_request(request: RequestRecord) -> str:
    key = request.business_key or "-"
    idem = request.idempotency_key
    idem_text = f" key={idem[:14]}…" if idem else ""
    return (
        f"journal #{request.seq}: {request.service}.{request.operation} "
        f"[{key}]{idem_text} at t={request.time:.1f} → {request.outcome}"
    )


def cite_effect(effect: AppliedEffect) -> str:
    idem = effect.idempotency_key
    idem_text = f" key={idem[:14]}…" if idem else ""
    return (
        f"applied #{effect.seq}: {effect.service}.{effect.operation} "
        f"[{effect.business_key}]{idem_text} → {effect.resource_id}"
    )


def request_refs(requests: list[RequestRecord]) -> list[EvidenceRef]:
    return [EvidenceRef(kind="request", index=r.seq) for r in requests]


def ok(name: str, summary: str = "") -> Verdict:
    return Verdict(checker=name, valid=True, summary=summary)


def unknown(name: str, summary: str) -> Verdict:
    return Verdict(checker=name, valid="unknown", summary=summary)


def violated(
    name: str, summary: str, evidence: list[str], refs: list[EvidenceRef] | None = None
) -> Verdict:
    return Verdict(checker=name, valid=False, summary=summary, evidence=evidence, refs=refs or [])
