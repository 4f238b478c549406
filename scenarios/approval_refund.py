"""A refund above the approval threshold: a human gate in front of a high-impact payment.

Seed 000 asks to "pause only after the pending question, approval payload, policy version and
allowed responses have been saved", and its fault matrix has "approval expires during downtime:
resume to a renewed approval gate, not the protected action". The refund step names the same
gate as the approval step, so the engine re-checks the grant before every attempt; a grant that
lapsed while the worker was dead sends the run back to the gate instead of refunding.

The scenario first charges the order (the refund needs a real charge), then asks for approval
of a partial refund: 120 EUR of a 250 EUR charge. The approval covers that amount and no more
(`GatePolicy.covers`): a refund of 250 EUR sent on it is outside its authority, however valid
the grant still is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from pydantic import JsonValue

from killpoint.contract.context import StepContext
from killpoint.contract.records import EffectIntent, RunStatus
from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.harness.scenario import ExpectedEffect, GatePolicy, Scenario
from killpoint.scenarios._common import number, receipt_of, text
from killpoint.scenarios.adapters import adapters_for
from killpoint.scenarios.objectives import HIGH_IMPACT
from killpoint.scenarios.order_saga import charge, charge_effect, refund_effect

GATE = "refund_over_threshold"
THRESHOLD_CENTS = 10_000
APPROVAL_TTL_S = 3_600.0


def make_input(run_id: str) -> dict[str, JsonValue]:
    return {
        "order_id": f"approval-order-{run_id}",
        "amount_cents": 25_000,
        "currency": "EUR",
        "refund_cents": 12_000,
        "reason": "customer cancelled",
    }


def request_refund(ctx: StepContext) -> JsonValue:
    return {
        "charge_id": receipt_of(ctx, "charge").resource_id,
        "refund_cents": number(ctx.input, "refund_cents"),
        "charged_cents": number(ctx.input, "amount_cents"),
        "reason": text(ctx.input, "reason"),
    }


def check_refund(value: JsonValue) -> str | None:
    """Only refunds that need the gate take this path, and never more than was charged."""
    if not isinstance(value, dict):
        return "the refund request is not an object"
    refund_cents, charged = value.get("refund_cents"), value.get("charged_cents")
    if not isinstance(refund_cents, int) or not isinstance(charged, int):
        return "amounts must be integers"
    if refund_cents > charged:
        return f"refund {refund_cents} exceeds the charge {charged}"
    if refund_cents <= THRESHOLD_CENTS:
        return f"refund {refund_cents} is under the approval threshold {THRESHOLD_CENTS}"
    return None


def refund(ctx: StepContext) -> list[EffectIntent]:
    args: dict[str, JsonValue] = {
        "charge_id": receipt_of(ctx, "charge").resource_id,
        "amount_cents": number(ctx.input, "refund_cents"),
    }
    return [EffectIntent(operation="refund", service="payments", args=args, high_impact=True)]


def expected_effects(inp: Mapping[str, JsonValue]) -> tuple[ExpectedEffect, ...]:
    # the charge is the setup, proven by its receipt; the refund is what this flow verifies
    charge = charge_effect(inp)
    # the refund names its gate, so the oracle checks a valid grant covered each attempt
    return (replace(charge, verifiable=False), replace(refund_effect(inp), gate=GATE))


WORKFLOW = Workflow(
    name="approval_refund",
    plan_version="approval-refund@1",
    states=("received", "charged", "refund_requested", "approved", "refunded", "verified"),
    initial="received",
    terminal={"verified": RunStatus.COMPLETED},
    transitions=(
        Transition(
            "received",
            "charged",
            Step("charge", StepKind.EFFECT, intents=charge, service="payments"),
        ),
        Transition(
            "charged",
            "refund_requested",
            Step("request_refund", StepKind.PURE, compute=request_refund, validate=check_refund),
        ),
        Transition(
            "refund_requested",
            "approved",
            Step("approve_refund", StepKind.APPROVAL, gate=GATE),
        ),
        Transition(
            "approved",
            "refunded",
            Step("refund", StepKind.EFFECT, intents=refund, service="payments", gate=GATE),
        ),
        Transition(
            "refunded",
            "verified",
            Step("verify_refund", StepKind.VERIFY, service="payments", target_step="refund"),
        ),
    ),
)

SCENARIO = Scenario(
    name="approval_refund",
    description="a refund above the threshold waits at an approval gate; the grant is "
    "re-checked before every refund attempt, then the refund is verified",
    workflow=WORKFLOW,
    make_input=make_input,
    make_adapters=adapters_for,
    expected_effects=expected_effects,
    # the refund sent may not exceed the refund the approver saw asked for
    gates={GATE: GatePolicy(ttl_s=APPROVAL_TTL_S, covers={"amount_cents": "refund_cents"})},
    objectives=HIGH_IMPACT,
)
