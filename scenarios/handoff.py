"""A multi-agent handoff with a written contract the receiver may refuse.

Seed 000: "When one agent delegates to another, record the handoff contract: input artifact,
expected output schema, deadline, permissions, and ownership. A shared transcript is not enough.
The receiving worker should be able to reject an incompatible or incomplete handoff rather than
continuing with assumptions." A planner gathers sources (an artifact), writes the contract as an
artifact of its own and declares the `handoff.sent` boundary; the receiver checks the contract
against what it supports and the clock, declares `handoff.accepted`, and only then publishes.
A contract it cannot honour (`handoff_incompatible`) ends in `needs_review`, never in a guess.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import JsonValue

from killpoint.contract import boundaries
from killpoint.contract.context import StepContext
from killpoint.contract.records import EffectIntent, RunStatus
from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.harness.scenario import ExpectedEffect, Scenario
from killpoint.scenarios._common import json_bytes, load_json, number, record, text
from killpoint.scenarios.adapters import adapters_for
from killpoint.scenarios.objectives import ROUTINE

RECEIVER_SCHEMAS = frozenset({"summary-v1", "summary-v2"})
RECEIVER_NEEDS = frozenset({"read:sources", "publish:reports"})


def make_input(run_id: str) -> dict[str, JsonValue]:
    return {
        "report_ref": f"report-{run_id}",
        "question": "Which checkpoint fields stop a duplicate refund?",
        "output_schema": "summary-v2",
        "deadline_s": 3_600,
        "permissions": ["read:sources", "publish:reports"],
        "owner": "writer-agent",
    }


def make_incompatible_input(run_id: str) -> dict[str, JsonValue]:
    return {
        **make_input(run_id),
        "report_ref": f"incompatible-report-{run_id}",
        "output_schema": "summary-v9",
    }


def gather(ctx: StepContext) -> bytes:
    question = text(ctx.input, "question")
    sources: list[JsonValue] = [f"{question} / finding {n}" for n in range(1, 4)]
    return json_bytes({"question": question, "sources": sources})


def write_contract(ctx: StepContext) -> bytes:
    """The planner's side: everything the receiver needs, nothing it would have to assume."""
    contract: dict[str, JsonValue] = {
        "input_artifact": ctx.artifact_refs["gather"].sha256,
        "output_schema": text(ctx.input, "output_schema"),
        "deadline": ctx.now + number(ctx.input, "deadline_s"),
        "permissions": ctx.input.get("permissions", []),
        "owner": text(ctx.input, "owner"),
        "report_ref": text(ctx.input, "report_ref"),
    }
    data = json_bytes(contract)
    ctx.boundary(boundaries.HANDOFF_SENT)
    return data


def accept_contract(ctx: StepContext) -> JsonValue:
    """The receiver's side: check the contract; declare acceptance only if it holds."""
    contract = load_json(ctx.artifact("write_contract"))
    problem = contract_problem(contract, ctx)
    if problem is None:
        ctx.boundary(boundaries.HANDOFF_ACCEPTED)
    return {**contract, "accepted": problem is None, "problem": problem}


def contract_problem(contract: Mapping[str, JsonValue], ctx: StepContext) -> str | None:
    if contract.get("output_schema") not in RECEIVER_SCHEMAS:
        return f"output schema {contract.get('output_schema')!r} is not supported"
    deadline = contract.get("deadline")
    if not isinstance(deadline, int | float) or ctx.now >= deadline:
        return f"the handoff deadline {deadline} has passed"
    granted = contract.get("permissions")
    missing = RECEIVER_NEEDS - set(granted if isinstance(granted, list) else [])
    if missing:
        return f"permissions {sorted(missing)} were not granted"
    if contract.get("input_artifact") != ctx.artifact_refs["gather"].sha256:
        return "the input artifact is not the one gathered"
    if not contract.get("owner"):
        return "the contract names no owner"
    return None


def check_acceptance(value: JsonValue) -> str | None:
    if not isinstance(value, dict):
        return "the acceptance is not an object"
    if value.get("accepted") is not True:
        return f"handoff refused: {value.get('problem')}"
    return None


def publish(ctx: StepContext) -> list[EffectIntent]:
    accepted = record(ctx.outputs, "accept_contract")
    notes = load_json(ctx.artifact("gather"))
    content = json_bytes(
        {"schema": text(accepted, "output_schema"), "owner": text(accepted, "owner"), **notes}
    ).decode()
    args: dict[str, JsonValue] = {"ref": text(accepted, "report_ref"), "content": content}
    return [EffectIntent(operation="publish", service="publisher", args=args)]


def terms_deadline(ctx: StepContext) -> float:
    """The accepted contract's deadline: publication after it is no longer what was agreed
    (a contract without a readable one was never accepted, so this is only a safeguard)."""
    deadline = record(ctx.outputs, "accept_contract").get("deadline")
    if isinstance(deadline, int | float) and not isinstance(deadline, bool):
        return float(deadline)
    return 0.0  # no readable deadline: the terms are treated as lapsed


def expected_effects(inp: Mapping[str, JsonValue]) -> tuple[ExpectedEffect, ...]:
    return (ExpectedEffect("publisher", text(inp, "report_ref")),)


def expected_nothing(inp: Mapping[str, JsonValue]) -> tuple[ExpectedEffect, ...]:
    return ()


WORKFLOW = Workflow(
    name="handoff",
    plan_version="handoff@1",
    states=("received", "gathered", "handoff_sent", "handoff_accepted", "published", "verified"),
    initial="received",
    terminal={"verified": RunStatus.COMPLETED},
    transitions=(
        Transition(
            "received",
            "gathered",
            Step("gather", StepKind.EXPENSIVE, produce=gather, media_type="application/json"),
        ),
        Transition(
            "gathered",
            "handoff_sent",
            Step(
                "write_contract",
                StepKind.EXPENSIVE,
                produce=write_contract,
                media_type="application/json",
            ),
        ),
        Transition(
            "handoff_sent",
            "handoff_accepted",
            Step(
                "accept_contract",
                StepKind.PURE,
                compute=accept_contract,
                validate=check_acceptance,
            ),
        ),
        Transition(
            "handoff_accepted",
            "published",
            Step(
                "publish",
                StepKind.EFFECT,
                intents=publish,
                service="publisher",
                expires=terms_deadline,
            ),
        ),
        Transition(
            "published",
            "verified",
            Step("verify_report", StepKind.VERIFY, service="publisher", target_step="publish"),
        ),
    ),
)

SCENARIO = Scenario(
    name="handoff",
    description="planner writes a handoff contract (input artifact, schema, deadline, "
    "permissions, owner); the receiver checks it, publishes, verifies",
    workflow=WORKFLOW,
    make_input=make_input,
    make_adapters=adapters_for,
    expected_effects=expected_effects,
    objectives=ROUTINE,
)

INCOMPATIBLE_SCENARIO = Scenario(
    name="handoff_incompatible",
    description="the contract asks for an output schema the receiver does not support: "
    "needs_review, nothing published",
    workflow=WORKFLOW,
    make_input=make_incompatible_input,
    make_adapters=adapters_for,
    expected_effects=expected_nothing,
    expected_status=RunStatus.NEEDS_REVIEW,
    objectives=ROUTINE,
)
