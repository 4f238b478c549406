"""What the services' journals say: which requests change the world, and where the expected
effects are.

The oracle counts effects by service and business key. Some keys exist only once an earlier
effect happened (a refund is keyed by the charge it refunds); such an expected effect names
its parent, and the real key is read from the journal here, never asked of the engine.
"""

from __future__ import annotations

from collections.abc import Iterable

from killpoint.fake_services.faults import OPERATIONS
from killpoint.fake_services.journal import AppliedEffect, Journal, RequestRecord
from killpoint.harness.history import ExpectedEffectRecord
from killpoint.harness.scenario import ExpectedEffect

# Operations that change the world, by service; everything else is a read. Derived from the
# services' own table of operations: a write is any request that is not a GET.
MUTATIONS = frozenset(
    (service, operation) for method, _, service, operation in OPERATIONS if method != "GET"
)


def is_mutation(request: RequestRecord) -> bool:
    return (request.service, request.operation) in MUTATIONS


def content_addressed(effect: AppliedEffect) -> bool:
    """An object named by its own content (the artifact store's sha256): whoever stored it
    first, it is the same object for everyone who asks for it."""
    return effect.resource_id == effect.business_key


def sent_by(origin: str | None, record: RequestRecord | AppliedEffect) -> bool:
    """Whether `record` is of the run that `origin` names: signed by it, or by nobody (a run
    without neighbours, or a request of an engine's own client that the harness did not sign).
    No origin asked: everything is."""
    return origin is None or record.origin in (origin, None)


def resolve_key(effect: ExpectedEffect, journal: Journal, origin: str | None = None) -> str | None:
    """The business key as the journal records it; None while the parent is missing. With an
    `origin`, the parent is the one that run made (a neighbour's charge of the same order id
    is not the one this run's refund refunds)."""
    if effect.parent is None:
        return effect.business_key
    parent_key = resolve_key(effect.parent, journal, origin)
    if parent_key is None:
        return None
    made = [
        e
        for e in journal.applied_effects(effect.parent.service, parent_key)
        if effect.parent.operation in (None, e.operation) and sent_by(origin, e)
    ]
    return made[0].resource_id if made else None


def expected_records(
    effects: Iterable[ExpectedEffect], journal: Journal, origin: str | None = None
) -> list[ExpectedEffectRecord]:
    """The expected effects as the history keeps them, each under its key as the journal has it
    (a child's own, once its parent happened; the run's of `origin`, when one is given)."""
    return [
        ExpectedEffectRecord(
            service=e.service,
            business_key=resolve_key(e, journal, origin) or e.business_key,
            operation=e.operation,
            irreversible=e.irreversible,
            verifiable=e.verifiable,
            gate=e.gate,
        )
        for e in effects
    ]


def applied(effect: ExpectedEffect, journal: Journal) -> list[AppliedEffect]:
    """Every time the service really applied this effect (the oracle wants exactly one)."""
    key = resolve_key(effect, journal)
    if key is None:
        return []
    return [
        e
        for e in journal.applied_effects(effect.service, key)
        if effect.operation in (None, e.operation)
    ]
