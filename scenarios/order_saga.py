"""An order saga: charge, ship, and refund the charge when shipping is definitively refused.

Seed 001 warns that "compensation is not rollback: sending a refund after a charge creates two
auditable events and may itself fail". This scenario makes that concrete. The happy input charges
and ships; the `order_saga_refund` input names a shipment the carrier refuses (a 4xx, so nothing
was shipped), the engine takes the transition's `on_failure` edge, and a COMPENSATE step refunds
the charge under its own ledger key, then a verification read proves the refund. A crash inside
the compensation must still end with exactly one charge and one refund.

The carrier is played by the publisher service: a shipment is published under its ref. An
undeliverable order is one with no shipment ref, which the carrier refuses with 422.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from killpoint.contract.context import StepContext
from killpoint.contract.records import EffectIntent, RunStatus
from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.harness.scenario import ExpectedEffect, Scenario
from killpoint.scenarios._common import json_bytes, number, receipt_of, text
from killpoint.scenarios.adapters import adapters_for
from killpoint.scenarios.objectives import HIGH_IMPACT

CURRENCIES = frozenset({"EUR", "USD", "GBP"})


def make_input(run_id: str) -> dict[str, JsonValue]:
    return {
        "order_id": f"order-{run_id}",
        "amount_cents": 4_200,
        "currency": "EUR",
        "shipment_ref": f"shipment-{run_id}",
    }


def make_undeliverable_input(run_id: str) -> dict[str, JsonValue]:
    return {**make_input(run_id), "order_id": f"undeliverable-order-{run_id}", "shipment_ref": ""}


def validate_order(ctx: StepContext) -> JsonValue:
    return {
        "order_id": text(ctx.input, "order_id"),
        "amount_cents": number(ctx.input, "amount_cents"),
        "currency": text(ctx.input, "currency"),
    }


def check_order(value: JsonValue) -> str | None:
    if not isinstance(value, dict):
        return "the order is not an object"
    amount = value.get("amount_cents")
    if not isinstance(amount, int) or amount <= 0:
        return "the amount must be a positive number of cents"
    if value.get("currency") not in CURRENCIES:
        return f"currency {value.get('currency')!r} is not accepted"
    return None


def charge(ctx: StepContext) -> list[EffectIntent]:
    args: dict[str, JsonValue] = {
        "order_id": text(ctx.input, "order_id"),
        "amount_cents": number(ctx.input, "amount_cents"),
        "currency": text(ctx.input, "currency"),
    }
    return [EffectIntent(operation="charge", service="payments", args=args, high_impact=True)]


def ship(ctx: StepContext) -> list[EffectIntent]:
    manifest: dict[str, JsonValue] = {
        "order_id": text(ctx.input, "order_id"),
        "charge": receipt_of(ctx, "charge").resource_id,
    }
    args: dict[str, JsonValue] = {
        "ref": text(ctx.input, "shipment_ref"),
        "content": json_bytes(manifest).decode(),
    }
    return [EffectIntent(operation="publish", service="publisher", args=args)]


def refund(ctx: StepContext) -> list[EffectIntent]:
    """Refund the whole charge; the charge id comes from the charge's committed receipt."""
    args: dict[str, JsonValue] = {
        "charge_id": receipt_of(ctx, "charge").resource_id,
        "amount_cents": number(ctx.input, "amount_cents"),
    }
    return [EffectIntent(operation="refund", service="payments", args=args, high_impact=True)]


def charge_effect(inp: Mapping[str, JsonValue]) -> ExpectedEffect:
    return ExpectedEffect("payments", text(inp, "order_id"), operation="create_charge")


def refund_effect(inp: Mapping[str, JsonValue]) -> ExpectedEffect:
    """Keyed by the charge id only the charge's receipt knows: resolved through `parent`."""
    parent = charge_effect(inp)
    return ExpectedEffect(
        "payments", f"refund of {parent.business_key}", operation="refund", parent=parent
    )


def expected_shipped(inp: Mapping[str, JsonValue]) -> tuple[ExpectedEffect, ...]:
    return (charge_effect(inp), ExpectedEffect("publisher", text(inp, "shipment_ref")))


def expected_refunded(inp: Mapping[str, JsonValue]) -> tuple[ExpectedEffect, ...]:
    return (charge_effect(inp), refund_effect(inp))


WORKFLOW = Workflow(
    name="order_saga",
    plan_version="order-saga@1",
    states=(
        "received",
        "order_validated",
        "charged",
        "charge_verified",
        "shipped",
        "delivered",
        "shipment_rejected",
        "refunded",
        "refund_verified",
    ),
    initial="received",
    terminal={"delivered": RunStatus.COMPLETED, "refund_verified": RunStatus.COMPENSATED},
    transitions=(
        Transition(
            "received",
            "order_validated",
            Step("validate_order", StepKind.PURE, compute=validate_order, validate=check_order),
        ),
        Transition(
            "order_validated",
            "charged",
            Step("charge", StepKind.EFFECT, intents=charge, service="payments"),
        ),
        Transition(
            "charged",
            "charge_verified",
            Step("verify_charge", StepKind.VERIFY, service="payments", target_step="charge"),
        ),
        Transition(
            "charge_verified",
            "shipped",
            Step("ship", StepKind.EFFECT, intents=ship, service="publisher"),
            on_failure="shipment_rejected",
        ),
        Transition(
            "shipped",
            "delivered",
            Step("verify_shipment", StepKind.VERIFY, service="publisher", target_step="ship"),
        ),
        Transition(
            "shipment_rejected",
            "refunded",
            Step(
                "refund",
                StepKind.COMPENSATE,
                intents=refund,
                service="payments",
                target_step="charge",
            ),
        ),
        Transition(
            "refunded",
            "refund_verified",
            Step("verify_refund", StepKind.VERIFY, service="payments", target_step="refund"),
        ),
    ),
)

SCENARIO = Scenario(
    name="order_saga",
    description="charge an order and ship it; verified delivery completes the saga",
    workflow=WORKFLOW,
    make_input=make_input,
    make_adapters=adapters_for,
    expected_effects=expected_shipped,
    objectives=HIGH_IMPACT,
)

REFUND_SCENARIO = Scenario(
    name="order_saga_refund",
    description="the carrier refuses the shipment (4xx); the charge is refunded and the refund "
    "verified: compensated, one charge and one refund",
    workflow=WORKFLOW,
    make_input=make_undeliverable_input,
    make_adapters=adapters_for,
    expected_effects=expected_refunded,
    expected_status=RunStatus.COMPENSATED,
    objectives=HIGH_IMPACT,
)
