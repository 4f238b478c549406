"""What the services' journals say about a scenario's expected effects.

The oracle counts effects by service and business key. Some keys exist only once an earlier
effect happened (a refund is keyed by the charge it refunds); such an expected effect names
its parent, and the real key is read from the journal here, never asked of the engine.
"""

from __future__ import annotations

from killpoint.fake_services.journal import AppliedEffect, Journal
from killpoint.harness.scenario import ExpectedEffect


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
