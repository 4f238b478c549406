"""Mutants only a shared world exposes: each is harmless while a run has the world to itself.

Seed 000's checkpoint table asks for "workflow and lineage IDs — identify the logical job,
current run, parent branch, tenant, and ownership boundary", failing which "a resumed worker can
attach state to the wrong job"; its security baseline asks for tenant isolation, and its human
gates: "on resume, verify the response belongs to the correct request and is still timely".
Seed 001 builds its idempotency key from `{workflowId, step, customerId, lineItems, currency}`.
Each mutant here drops one of those scopes, as a team that only ever ran one workflow of one
tenant at a time would: a second tenant with the same orders, or another workflow at the same
gate (`FaultSchedule.neighbours`), is what makes the mistake do harm.
"""

from __future__ import annotations

from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.records import ApprovalRecord, EffectIntent, Receipt
from killpoint.contract.workflow import Transition
from killpoint.reference.checkpoint import ApprovalGrant, Checkpoint
from killpoint.reference.fold import Change
from killpoint.reference.integrity import canonical_json, sha256_hex
from killpoint.reference.ledger import EffectExecutor, Session
from killpoint.reference.steps import Steps
from killpoint.reference.store import Store
from killpoint.scenarios.mutants.wrapped import Wrapped


def intent_key(step: str, intent: EffectIntent) -> str:
    """Seed 001's key without its `workflowId`: the hash of what is asked alone (the step, the
    operation and its business arguments: the order id, the amount, the currency)."""
    doc = {"step": step, "operation": intent.operation, "args": intent.args}
    return "kp-" + sha256_hex(canonical_json(doc))[:40]


class _KeyedByIntent(Wrapped):
    """An adapter that sends and looks up under the intent's key, whatever the ledger says."""

    def __init__(self, adapter: EffectAdapter, step: str) -> None:
        super().__init__(adapter)
        self.step = step

    def send(self, intent: EffectIntent, key: str) -> Receipt:
        return self.adapter.send(intent, intent_key(self.step, intent))

    def lookup(self, intent: EffectIntent, key: str) -> Receipt | None:
        return self.adapter.lookup(intent, intent_key(self.step, intent))


class KeyOfTheIntent(EffectExecutor):
    """001: the idempotency key the service sees is derived from the business intent alone
    (`sha256({step, customerId, lineItems, currency})`, the seed's key without its workflow),
    while the ledger keeps a row per workflow. One run, one order: every retry carries the same
    key, as it must. Two tenants' identical orders (order ids are per shop) share it: the
    payment provider replays the first tenant's charge to the second, and one customer is
    charged once for two orders."""

    def __init__(self, session: Session, adapter: EffectAdapter, step: str) -> None:
        super().__init__(session, _KeyedByIntent(adapter, step), step)


def granted_in_scope(store: Store, scope: str, gate: str, now: float) -> ApprovalRecord | None:
    """A granted, unexpired approval of `gate` in `scope`, whichever run's request it answered."""
    for workflow_id in store.workflow_ids():
        for approval in store.approvals(workflow_id):
            if (
                approval.gate == gate
                and approval.scope == scope
                and approval.status == "granted"
                and (approval.expires_at or 0.0) > now
            ):
                return approval
    return None


class ApprovalTakenByScope(Steps):
    """000: "on resume, verify the response belongs to the correct request and is still
    timely" — only its second half. An approver's answer is found by what it approves (the
    workflow's name and the gate: its scope) and checked for its expiry, not for the request it
    answered: another workflow's approval at the same gate, another tenant's too, opens this
    run's gate, and its protected call goes out on a grant no approver gave it."""

    def approval(self, session: Session, cp: Checkpoint, transition: Transition) -> Change:
        gate = transition.step.gate
        assert gate is not None
        found = granted_in_scope(self.store, f"{cp.workflow_name}:{gate}", gate, self.clock.now())
        if found is None or found.actor is None or found.expires_at is None:
            return super().approval(session, cp, transition)
        granted = ApprovalGrant(
            gate=gate,
            actor=found.actor,
            scope=found.scope,
            policy_version=found.policy_version,
            expires_at=found.expires_at,
        )
        kept = tuple(a for a in cp.approvals if a.gate != gate)
        return Change(transition.target, approvals=(*kept, granted))

    def require_grant(self, workflow_id: str, gate: str) -> None:
        name = self.store.workflow(workflow_id).workflow_name
        if granted_in_scope(self.store, f"{name}:{gate}", gate, self.clock.now()) is None:
            super().require_grant(workflow_id, gate)
