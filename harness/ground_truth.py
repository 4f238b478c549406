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


def resolve_key(effect: ExpectedEffect, journal: Journal) -> str | None:
    """The business key as the journal records it; None while the parent is missing."""
    if effect.parent is None:
        return effect.business_key
    parent_key = resolve_key(effect.parent, journal)
    if parent_key is None:
        return None
    made = [
        e
        for e in journal.applied_effects(effect.parent.service, parent_key)
        if effect.parent.operation in (None, e.operation)
    ]
    return made[0].resource_id if made else None


def expected_records(
    effects: Iterable[ExpectedEffect], journal: Journal
) -> list[ExpectedEffectRecord]:
    """The expected effects as the history keeps them, each under its key as the journal has it
    (a child's own, once its parent happened)."""
    return [
        ExpectedEffectRecord(
            service=e.service,
            business_key=resolve_key(e, journal) or e.business_key,
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
