"""Mutants only a realistic downstream service exposes: each is harmless against a fake that
answers every read at once and holds nothing but the run's own objects.

A read that lags its write, a search that lags the sends, and an account that already holds
other customers' objects under the run's business keys (`fake_services/realism.py`), are what
make these mistakes do harm.
Each is the reference engine with one seam overridden, written from the seeds' description of
the mistake, not from the rule that exposes it.
"""

from __future__ import annotations

from contextlib import suppress

from killpoint import fake_services as fs
from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.errors import OutcomeUnknown
from killpoint.contract.records import EffectIntent, EffectRecord, Receipt
from killpoint.contract.workflow import Step
from killpoint.reference.ledger import EffectExecutor, Session, intent_of
from killpoint.reference.steps import Steps
from killpoint.scenarios.adapters import FINGERPRINT
from killpoint.scenarios.mutants.wrapped import Wrapped


class RepublishedWhenNotYetVisible(Steps):
    """001: "the API returned success" taken as the only proof, and a read as the truth the
    moment after: an effect the first verification read does not show is taken as lost and
    sent again before the verification goes on."""

    def read_postcondition(
        self, session: Session, step: Step, record: EffectRecord
    ) -> EffectRecord:
        assert step.service is not None and record.receipt is not None
        adapter = self.adapters[step.service]
        intent = intent_of(record)
        seen = False
        with suppress(OutcomeUnknown):
            seen = adapter.verify(intent, record.receipt)
        if not seen:
            with suppress(OutcomeUnknown):
                adapter.send(intent, record.idempotency_key)
        return super().read_postcondition(session, step, record)


class _OneSearchIsTheTruth(Wrapped):
    """An outbox whose reconciling lookup takes a search that finds nothing as proof at once."""

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        client = getattr(self.adapter, "client", None)
        if not isinstance(client, fs.OutboundClient):
            return self.adapter.lookup(intent, key)
        try:
            page = client.search(FINGERPRINT, key)
        except fs.OutcomeUnknown as exc:
            raise OutcomeUnknown(f"outbound search: {exc}") from exc
        return None if not page.messages else self.adapter.lookup(intent, key)


class ResentWhenNotYetSearchable(EffectExecutor):
    """001: a read right after the write taken as the truth — a message in doubt that the
    provider's search does not show yet is taken as never sent, and sent again."""

    def __init__(self, session: Session, adapter: EffectAdapter, step: str) -> None:
        if adapter.service == "outbound":
            adapter = _OneSearchIsTheTruth(adapter)
        super().__init__(session, adapter, step)


class _ChargesFoundByOrder(Wrapped):
    """A payments adapter whose reconciling lookup searches charges by the order id."""

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        order_id = intent.args.get("order_id")
        client = getattr(self.adapter, "client", None)
        if not isinstance(order_id, str) or not isinstance(client, fs.PaymentsClient):
            return self.adapter.lookup(intent, key)
        try:
            charges = client.charges_by_order(order_id)
        except fs.OutcomeUnknown as exc:
            raise OutcomeUnknown(f"payments charges_by_order: {exc}") from exc
        if not charges:
            return None
        charge = charges[0]  # the order's charge: an order is charged once
        detail = {"status": charge.status, "idempotency_key": charge.idempotency_key}
        return Receipt(resource_id=charge.id, detail={"order_id": order_id, **detail})


class ChargeFoundByOrderId(EffectExecutor):
    """000: reconciling by a business key that is not unique — a charge in doubt is looked up
    by its order id, and the first charge under that id is taken as the run's own, though
    order ids are unique per shop and the payment account is shared with other customers."""

    def __init__(self, session: Session, adapter: EffectAdapter, step: str) -> None:
        if adapter.service == "payments":
            adapter = _ChargesFoundByOrder(adapter)
        super().__init__(session, adapter, step)
