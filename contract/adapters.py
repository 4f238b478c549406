"""The contract between the engine and a downstream service.

Scenarios implement it on top of real clients; the engine only ever talks to a service through
it. The three flags are the facts recovery depends on: can the service recognise a retried key,
can it be asked whether an effect happened, and can the effect be undone.
"""

from __future__ import annotations

from typing import Protocol

from killpoint.contract.records import EffectIntent, Receipt


class Capabilities(Protocol):
    """What recovery needs to know about a service to choose what to do with an effect in
    doubt: retry with the same key, ask, or escalate."""

    idempotent: bool  # a retry with the same key cannot apply the effect twice
    queryable: bool  # `lookup` can prove presence or absence
    irreversible: bool  # no compensation exists: an unknown outcome must be escalated


class EffectAdapter(Capabilities, Protocol):
    service: str

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        """Apply the effect. Raise `OutcomeUnknown` on timeout or 5xx, `EffectRejected` on 4xx."""
        ...

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        """The receipt if the effect happened, None if it provably did not; else `CannotTell`."""
        ...

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        """Whether the authoritative state shows the effect's postcondition now."""
        ...
