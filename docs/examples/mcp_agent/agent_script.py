"""The scripted model: what an LLM would decide at each turn of order_saga, as a pure function.

A real model reads the conversation and picks the next tool call; this one does the same with
rules, so a run is repeatable and needs no network and no weights. It sees only what a model
sees: the user's prompt (the order), its own earlier tool calls and what each one answered, as
pydantic-ai's messages carry them. Each call's id names the saga step it belongs to
(`charge-3`), so the agent can report the step to the harness before the call.

Two policies, the two ways an agent is commonly written:

- `naive`: charge with no idempotency key, publish without looking first; a call whose outcome
  is unknown (a tool error `outcome unknown:`, or a call that never answered) is made again.
- `careful`: a stable key per (workflow, operation); before each send a lookup
  (`payments_charge_by_key`, `publisher_read`); an unknown outcome is resolved by that lookup,
  never by sending blind. `not_visible` means "ask again later", never absent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import (
    SYNTHESIZED_TOOL_RETURN_METADATA_KEY as SYNTHESIZED,
)
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo

ORDER_MARK = "Order: "
MAX_SENDS = 3  # sends of one operation whose outcome stayed unknown, then a person decides
MAX_READS = 6  # reads of one lookup: waits of 2, 4, 8, 16, 32 s between them
CHARGE, VERIFY_CHARGE, SHIP, VERIFY_SHIPMENT = "charge", "verify_charge", "ship", "verify_shipment"
WAIT = "wait"  # the agent's own tool: sleep on the harness's clock
READ = "publisher_read"
CURRENCIES = frozenset({"EUR", "USD", "GBP"})


def prompt_for(order: dict[str, Any]) -> str:
    return (
        "Charge this order, check the charge went through, ship it under its shipment ref and"
        f" check the shipment is visible. {ORDER_MARK}{json.dumps(order, sort_keys=True)}"
    )


def stable_key(workflow_id: str, operation: str) -> str:
    """The careful agent's idempotency key: the same for every worker of one workflow."""
    return hashlib.sha256(f"{workflow_id}/{operation}".encode()).hexdigest()


@dataclass
class Call:
    """One tool call of the conversation and what came back: `result` when it answered,
    `outcome` "unknown" or "rejected" when it failed, neither while unanswered."""

    step: str
    tool: str
    args: dict[str, Any]
    result: Any = None
    outcome: str | None = None
    answered: bool = False

    @property
    def ok(self) -> bool:
        return self.answered and self.outcome is None

    @property
    def found(self) -> bool:
        return self.ok and isinstance(self.result, dict) and self.result.get("found") is not False

    @property
    def missing(self) -> str | None:
        """A lookup's `not_found` / `not_visible`, or None."""
        if self.ok and isinstance(self.result, dict) and self.result.get("found") is False:
            return str(self.result.get("error"))
        return None


@dataclass
class Turn:
    """What the model knows at a turn: the order and every call so far, in order."""

    order: dict[str, Any]
    calls: list[Call] = field(default_factory=list)

    def in_step(self, step: str) -> list[Call]:
        return [c for c in self.calls if c.step == step]

    def last(self, step: str) -> Call | None:
        calls = self.in_step(step)
        return calls[-1] if calls else None


def read_turn(messages: list[ModelMessage]) -> Turn:
    """The order from the first prompt, and each tool call matched with its answer."""
    order: dict[str, Any] = {}
    calls: dict[str, Call] = {}
    for message in messages:
        for part in message.parts:
            if isinstance(part, UserPromptPart) and not order and isinstance(part.content, str):
                order = json.loads(part.content.partition(ORDER_MARK)[2])
            elif isinstance(part, ToolCallPart):
                step = part.tool_call_id.rpartition("-")[0]
                calls[part.tool_call_id] = Call(step, part.tool_name, part.args_as_dict())
            elif isinstance(part, ToolReturnPart | RetryPromptPart) and part.tool_call_id in calls:
                _answer(calls[part.tool_call_id], part)
    return Turn(order, list(calls.values()))


def _answer(call: Call, part: ToolReturnPart | RetryPromptPart) -> None:
    call.answered = True
    if isinstance(part, RetryPromptPart):
        call.outcome = outcome_of(part.content)
    elif part.outcome == "interrupted" or (part.metadata or {}).get(SYNTHESIZED):
        call.outcome = "unknown"  # closed out on resume: the call was made, its answer never heard
    elif part.outcome in ("failed", "retried"):  # a tool error, handed back for another try
        call.outcome = outcome_of(part.content)
    elif part.outcome == "denied":
        call.outcome = "rejected"
    else:
        call.result = part.content


def outcome_of(error: object) -> str:
    """ "rejected" or "unknown" from a tool error, as the services' MCP server words it (pydantic-ai
    passes on its structured content, `{"outcome": ...}`, rather than the text)."""
    text = error if isinstance(error, str) else json.dumps(error)
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if (isinstance(doc, dict) and doc.get("outcome") == "rejected") or text.startswith("rejected:"):
        return "rejected"
    return "unknown"  # anything else: it may or may not have been applied


def state_of(turn: Turn) -> str:
    """How far the saga has come, in order_saga's state names (the first call the model makes
    says it took the order as valid)."""
    if _shipment_seen(turn):
        return "delivered"
    if _publication(turn) is not None:
        return "shipped"
    if _verified(turn):
        return "charge_verified"
    if _charge(turn) is not None:
        return "charged"
    return "order_validated" if turn.calls else "received"


def invalid(order: dict[str, Any]) -> str | None:
    """What is wrong with the order (order_saga's `validate_order`), or None."""
    amount = order.get("amount_cents")
    if not isinstance(amount, int) or amount <= 0:
        return "the amount must be a positive number of cents"
    if order.get("currency") not in CURRENCIES:
        return f"currency {order.get('currency')!r} is not accepted"
    return None


# -- the two policies ---------------------------------------------------------------------------


def call(turn: Turn, step: str, tool: str, **args: Any) -> ModelResponse:
    return ModelResponse(
        parts=[ToolCallPart(tool, args, tool_call_id=f"{step}-{len(turn.calls) + 1}")]
    )


def answer(text: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(text)])


def scripted(
    workflow_id: str, careful: bool
) -> Callable[[list[ModelMessage], AgentInfo], ModelResponse]:
    """The FunctionModel function of one variant."""

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = read_turn(messages)
        return careful_turn(turn, workflow_id) if careful else naive_turn(turn)

    return model


def naive_turn(turn: Turn) -> ModelResponse:
    order = turn.order
    last = turn.calls[-1] if turn.calls else None
    if last is not None and last.outcome == "rejected":
        return answer(f"failed: {last.tool} was rejected")
    if last is not None and last.outcome == "unknown" and last.tool != WAIT:
        same = [c for c in turn.calls if (c.tool, c.args) == (last.tool, last.args)]
        if len(same) >= MAX_SENDS:
            return answer(f"needs_review: {last.tool} unknown after {len(same)} tries")
        return call(turn, last.step, last.tool, **last.args)  # try again: it may have failed
    if not turn.calls and invalid(order):
        return answer(f"failed: {invalid(order)}")
    charge = _charge(turn)
    if charge is None:
        return call(turn, CHARGE, "payments_create_charge", **_charge_args(order))
    if not _verified(turn):
        seen = turn.last(VERIFY_CHARGE)
        if seen is not None and seen.ok:
            return answer("needs_review: the charge is not among the order's charges")
        return call(turn, VERIFY_CHARGE, "payments_charges_by_order", order_id=order["order_id"])
    if _publication(turn) is None:
        return call(turn, SHIP, "publisher_publish", **_ship_args(order, charge))
    return _verify_shipment(turn)


def careful_turn(turn: Turn, workflow_id: str) -> ModelResponse:
    order = turn.order
    rejected = next((c for c in reversed(turn.calls) if c.outcome == "rejected"), None)
    if rejected is not None:
        return answer(f"failed: {rejected.tool} was rejected")
    if not turn.calls and invalid(order):
        return answer(f"failed: {invalid(order)}")
    charge = _charge(turn)
    if charge is None:
        key = stable_key(workflow_id, "charge")
        return _look_then_send(
            turn,
            CHARGE,
            ("payments_charge_by_key", {"key": key}),
            ("payments_create_charge", {**_charge_args(order), "idempotency_key": key}),
        )
    if not _verified(turn):
        seen = turn.last(VERIFY_CHARGE)
        if seen is not None and seen.ok:
            return answer("needs_review: the charge is not found under its key")
        if seen is not None and _tries(turn, VERIFY_CHARGE) >= MAX_READS:
            return answer("needs_review: the charge could not be read")
        return call(
            turn, VERIFY_CHARGE, "payments_charge_by_key", key=stable_key(workflow_id, "charge")
        )
    if _publication(turn) is None:
        return _look_then_send(
            turn,
            SHIP,
            (READ, {"ref": order["shipment_ref"]}),
            ("publisher_publish", _ship_args(order, charge)),
        )
    return _verify_shipment(turn)


def _look_then_send(
    turn: Turn, step: str, lookup: tuple[str, dict[str, Any]], send: tuple[str, dict[str, Any]]
) -> ModelResponse:
    """Send only after a lookup answered `not_found`; on `not_visible` wait and look again; on
    an unknown outcome (of the send or the lookup) look again, never send blind."""
    last = turn.last(step)
    sends = [c for c in turn.in_step(step) if c.tool == send[0]]
    if last is not None and last.tool == lookup[0] and last.missing == "not_found":
        if len(sends) >= MAX_SENDS:
            return answer(f"needs_review: {send[0]} unknown after {len(sends)} sends")
        return call(turn, step, send[0], **send[1])
    reads = [c for c in turn.in_step(step) if c.tool == lookup[0]]
    if last is not None and last.tool == lookup[0] and last.missing == "not_visible":
        if len(reads) >= MAX_READS:
            return answer(f"needs_review: {lookup[0]} still not visible after {len(reads)} reads")
        return call(turn, step, WAIT, seconds=float(2 ** len(reads)))
    if len(reads) >= MAX_READS * 2:
        return answer(f"needs_review: {lookup[0]} did not answer")
    return call(turn, step, lookup[0], **lookup[1])


def _verify_shipment(turn: Turn) -> ModelResponse:
    """Read the publication until it shows, backing off on the harness's clock."""
    if _shipment_seen(turn):
        return answer("delivered")
    last = turn.last(VERIFY_SHIPMENT)
    reads = [c for c in turn.in_step(VERIFY_SHIPMENT) if c.tool == READ]
    if last is not None and last.tool == READ and last.missing is not None:
        if len(reads) >= MAX_READS:
            return answer(f"needs_review: the shipment is not visible after {len(reads)} reads")
        return call(turn, VERIFY_SHIPMENT, WAIT, seconds=float(2 ** len(reads)))
    if len(reads) >= MAX_READS * 2:
        return answer("needs_review: the shipment could not be read")
    return call(turn, VERIFY_SHIPMENT, READ, ref=turn.order["shipment_ref"])


def _shipment_seen(turn: Turn) -> bool:
    return any(c.tool == READ and c.found for c in turn.in_step(VERIFY_SHIPMENT))


def _tries(turn: Turn, step: str) -> int:
    return len(turn.in_step(step))


def _charge(turn: Turn) -> dict[str, Any] | None:
    """The order's charge as a send or a lookup answered it."""
    for c in turn.in_step(CHARGE):
        if c.found and c.tool in ("payments_create_charge", "payments_charge_by_key"):
            result: dict[str, Any] = c.result
            return result
    return None


def _verified(turn: Turn) -> bool:
    charge = _charge(turn)
    if charge is None:
        return False
    for c in turn.in_step(VERIFY_CHARGE):
        if c.tool == "payments_charges_by_order" and c.ok:
            if any(x.get("id") == charge["id"] for x in c.result.get("charges", [])):
                return True
        elif c.tool == "payments_charge_by_key" and c.found and c.result["id"] == charge["id"]:
            return True
    return False


def _publication(turn: Turn) -> dict[str, Any] | None:
    for c in turn.in_step(SHIP):
        if c.found and c.tool in ("publisher_publish", READ):
            result: dict[str, Any] = c.result
            return result
    return None


def _charge_args(order: dict[str, Any]) -> dict[str, Any]:
    return {k: order[k] for k in ("order_id", "amount_cents", "currency")}


def _ship_args(order: dict[str, Any], charge: dict[str, Any]) -> dict[str, Any]:
    manifest = {"order_id": order["order_id"], "charge": charge["id"]}
    return {"ref": order["shipment_ref"], "content": json.dumps(manifest, sort_keys=True)}
