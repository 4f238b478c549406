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
    """A scenario's connection from its effect steps to one service (`Scenario.make_adapters`).

    An engine calls `send` with a key it keeps stable across retries and resumes; for an effect
    whose outcome is in doubt it calls `lookup` before sending again: a receipt means it
    happened (commit it), `None` that it provably did not (send again, same key), `CannotTell`
    that nobody can say (a non-idempotent effect then stops for review, never sent twice).
    `verify` proves the postcondition before a run may complete. The flags (`Capabilities`)
    say which of these moves are safe for this service.
    """

    service: str

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        """Apply the effect. Raise `OutcomeUnknown` on timeout or 5xx, `EffectRejected` on 4xx."""
        ...

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        """The receipt if the effect happened, None if it provably did not; else `CannotTell`.

        None is proof of absence, not "not seen yet": an adapter of an eventually consistent
        service answers None only when the service says it holds nothing (the publisher: on
        `not_found`, never on `not_visible`). It may raise `OutcomeUnknown` when the read
        itself is lost."""
        ...

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        """Whether the authoritative state shows the effect's postcondition now."""
        ...
