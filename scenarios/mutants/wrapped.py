"""An effect adapter seen through a mutant's mistake.

Several mutants make their mistake between the ledger and the service (a client that retries,
keys per worker, a lookup or a read that misreads a failure); each subclasses `Wrapped` and
overrides the one call it gets wrong, so the rest reaches the scenario's adapter unchanged.
"""

from __future__ import annotations

from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.records import EffectIntent, Receipt


class Wrapped:
    """Everything as `adapter` does it: its capabilities, its sends, lookups and reads."""

    def __init__(self, adapter: EffectAdapter) -> None:
        self.adapter = adapter
        self.service, self.idempotent = adapter.service, adapter.idempotent
        self.queryable, self.irreversible = adapter.queryable, adapter.irreversible

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        return self.adapter.send(intent, key)

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        return self.adapter.lookup(intent, key)

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        return self.adapter.verify(intent, receipt)
