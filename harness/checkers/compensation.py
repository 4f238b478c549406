"""Single compensation: each effect is compensated at most once — one undo sent, not one undo
applied, since a service may refuse a second refund and so hide it from `single_effect`.

A compensation of an effect is a write to the same service keyed by the resource the effect
created (a refund keyed by its charge, as `ExpectedEffect.parent` declares it). Retries of one
compensation carry one idempotency key; a second key is a second compensation, whatever the
service answered. A compensation sent without a key is counted where the service applied it
(its retries cannot be told from a second undo by the journal). Its evidence is the journal,
which every history holds, so it judges any engine and is never unknown.
"""

from __future__ import annotations

from killpoint.contract.workflow import Workflow
from killpoint.fake_services.journal import AppliedEffect, RequestRecord
from killpoint.harness.checkers._common import (
    cite_effect,
    cite_request,
    mutations,
    ok,
    request_refs,
    violated,
)
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "single_compensation"


def check_compensation(history: History, workflow: Workflow) -> Verdict:
    sends = mutations(history)
    compensated = 0
    for effect in history.applied:
        undos = [r for r in sends if _undoes(r, effect)]
        if not undos:
            continue
        compensated += 1
        keyed: dict[str, RequestRecord] = {}
        for r in undos:
            if r.idempotency_key is not None:
                keyed.setdefault(r.idempotency_key, r)
        keyless = [a for a in history.applied if a.idempotency_key is None and _undoes(a, effect)]
        if len(keyed) + len(keyless) > 1:
            cited = [*keyed.values()][:2]
            return violated(
                NAME,
                f"{effect.service} [{effect.resource_id}] was compensated "
                f"{len(keyed) + len(keyless)} times",
                [cite_effect(effect), *(cite_request(r) for r in cited)]
                + [cite_effect(a) for a in keyless[: 2 - len(cited)]],
                [EvidenceRef(kind="effect", index=effect.seq), *request_refs(cited)],
            )
    return ok(NAME, f"{compensated} effect(s) compensated, each once")


def _undoes(write: RequestRecord | AppliedEffect, effect: AppliedEffect) -> bool:
    """A write of the effect's service keyed by the resource the effect created."""
    return (
        write.service == effect.service
        and write.business_key == effect.resource_id
        and write.operation != effect.operation
    )
