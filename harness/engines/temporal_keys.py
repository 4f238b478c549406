"""The units' stable idempotency key, made safe to put in a URL path.

The units key an effect `workflow/step/operation`; the payments service looks a charge up by
key as a path segment (`/payments/charges/by-key/{key}`), where each "/" splits the key and the
lookup reads 404, so the keyed variant would never find what it sent. Until the harness quotes
the key (see the findings' "Needs from the harness"), the adapter replaces "/" in every key it
hands to a service, the same on every attempt.
"""

from __future__ import annotations

from killpoint.harness.contract.adapters import EffectAdapter
from killpoint.harness.contract.records import EffectIntent, Receipt


class SafeKeys:
    """An effect adapter whose keys carry no "/"."""

    def __init__(self, inner: EffectAdapter) -> None:
        self.inner = inner
        self.service = inner.service
        self.idempotent, self.queryable = inner.idempotent, inner.queryable
        self.irreversible = inner.irreversible

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        return self.inner.send(intent, key.replace("/", "~"))

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        return self.inner.lookup(intent, key.replace("/", "~"))

    def verify(self, intent: EffectIntent, receipt: Receipt) -> bool:
        return self.inner.verify(intent, receipt)
