"""Minimal histories for the checkers' own tests, built by hand.

`completed_run()` is one small correct run of `WORKFLOW` that an engine with a history reader
left behind: validate the order, charge it once, read the charge back, complete. Each test
changes only the records its case is about (`completed_run(requests=[...])`), so the verdict
and the evidence it cites follow from what the test wrote. `unreadable()` is the same run as
the oracle sees it through an engine that exposes no history reader. `ledger_row()` is the
charge as its ledger recorded it (`completed_run(effects=[ledger_row()])`), with the body its
request carried (`CHARGE_BODY`) and the boundary hits (`hit()`) the engine reported.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import JsonValue

from killpoint.contract.records import (
    BudgetLimits,
    EffectRecord,
    EffectStatus,
    Receipt,
    RunStatus,
)
from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
from killpoint.fake_services.journal import AppliedEffect, RequestRecord, canonical, fingerprint
from killpoint.harness.history import (
    ExpectedEffectRecord,
    GrantRecord,
    History,
    HitRecord,
    LieRecord,
    NeighbourRecord,
    TamperRecord,
    WorkerRecord,
)
from killpoint.harness.protocol import CheckpointRecord
from killpoint.harness.schedule import FaultSchedule


def check_order(value: JsonValue) -> str | None:
    """The tiny workflow's validator: an order needs a positive total."""
    total = value.get("total") if isinstance(value, dict) else None
    if not isinstance(total, int | float):
        return "no total"
    return None if total > 0 else f"total {total:g} is not positive"


def _never_called(*_: Any) -> Any:
    raise AssertionError("the checkers never run a step")


def _step(name: str, kind: StepKind, **fields: Any) -> Step:
    needs: dict[StepKind, dict[str, Any]] = {
        StepKind.PURE: {"compute": _never_called},
        StepKind.EFFECT: {"intents": _never_called, "service": "payments"},
        StepKind.VERIFY: {"service": "payments", "target_step": "charge"},
    }
    return Step(name, kind, **{**needs[kind], **fields})


# received → order_validated → charged → verified (completed); a declined charge goes to
# declined → closed (also completed) through a validated step the main path never runs.
WORKFLOW = Workflow(
    name="tiny_order",
    plan_version="1",
    states=("received", "order_validated", "charged", "verified", "declined", "closed"),
    initial="received",
    terminal={"verified": RunStatus.COMPLETED, "closed": RunStatus.COMPLETED},
    transitions=(
        Transition(
            "received",
            "order_validated",
            _step("validate_order", StepKind.PURE, validate=check_order),
        ),
        Transition("order_validated", "charged", _step("charge", StepKind.EFFECT), "declined"),
        Transition("charged", "verified", _step("verify_charge", StepKind.VERIFY)),
        Transition(
            "declined", "closed", _step("note_decline", StepKind.PURE, validate=check_order)
        ),
    ),
)
LIMITS = BudgetLimits(attempts=3, steps=10)
CHARGE = ExpectedEffectRecord(service="payments", business_key="order-1", operation="create_charge")
GOOD_ORDER: dict[str, JsonValue] = {"total": 30}
CHARGE_ARGS: dict[str, JsonValue] = {"order_id": "order-1", "amount_cents": 3000, "currency": "EUR"}
CHARGE_BODY = fingerprint(CHARGE_ARGS)  # the adapter sends the charge's arguments as its body


def request(
    seq: int,
    operation: str = "create_charge",
    *,
    service: str = "payments",
    key: str = "order-1",
    time: float | None = None,
    outcome: str = "applied",
    body: str = "f",
    idempotency_key: str | None = "",
    sent: JsonValue = None,
) -> RequestRecord:
    """One delivery the services journaled (`operation` decides whether it is a write); its
    idempotency key is `key/operation` unless given (None: a service that takes no key);
    `sent` the JSON body the journal kept of it (None: none kept, as for bytes)."""
    return RequestRecord(
        seq=seq,
        service=service,
        operation=operation,
        idempotency_key=f"{key}/{operation}" if idempotency_key == "" else idempotency_key,
        business_key=key,
        fingerprint=body,
        time=float(seq) if time is None else time,
        outcome=outcome,
        body=None if sent is None else canonical(sent),
    )


def read(seq: int, *, key: str = "order-1", outcome: str = "ok") -> RequestRecord:
    return request(seq, "charge_by_key", key=key, outcome=outcome)


def effect(
    seq: int,
    *,
    key: str = "order-1",
    operation: str = "create_charge",
    service: str = "payments",
    idempotency_key: str | None = "",
    resource_id: str | None = None,
) -> AppliedEffect:
    """One effect a service applied (the journal numbers effects apart from requests)."""
    return AppliedEffect(
        seq=seq,
        service=service,
        operation=operation,
        business_key=key,
        idempotency_key=f"{key}/{operation}" if idempotency_key == "" else idempotency_key,
        fingerprint="f",
        time=float(seq),
        resource_id=resource_id or f"ch_{seq}",
    )


def ledger_row(
    attempts: int = 1,
    *,
    key: str = "order-1/create_charge",
    args: dict[str, JsonValue] | None = None,
    receipt: dict[str, JsonValue] | None = None,
    status: EffectStatus = EffectStatus.VERIFIED,
    **fields: Any,
) -> EffectRecord:
    """The charge's ledger row: its key, its arguments, the attempts it spent, and a receipt
    (`receipt=` the detail the service answered; {} for none that names an argument)."""
    base: dict[str, Any] = {
        "workflow_id": "tiny_order:1",
        "operation_id": "charge/charge",
        "step": "charge",
        "service": "payments",
        "intent": "charge",
        "args": CHARGE_ARGS if args is None else args,
        "idempotency_key": key,
        "status": status,
        "attempts": attempts,
        "receipt": Receipt(resource_id="ch_1", detail=receipt or {}),
    }
    return EffectRecord(**{**base, **fields})


def hit(
    boundary: str, time: float, *, worker: int = 0, step: str | None = None, journal_seq: int = 0
) -> HitRecord:
    """A boundary hit the engine reported, when the services had seen `journal_seq` requests."""
    return HitRecord(
        worker=worker,
        step=step,
        boundary=boundary,
        occurrence=1,
        time=time,
        journal_seq=journal_seq,
    )


def checkpoint(
    sequence: int,
    state: str,
    *,
    status: str = "running",
    attempts_left: float = 3,
    outputs: dict[str, JsonValue] | None = None,
    **fields: Any,
) -> CheckpointRecord:
    """A committed, trusted checkpoint of run `run-1`; `fields` override any other column."""
    base: dict[str, Any] = {
        "sequence": sequence,
        "state": state,
        "status": status,
        "run_id": "run-1",
        "budget": {"attempts_left": attempts_left, "steps_left": 10.0 - sequence},
        "outputs": {} if outputs is None else outputs,
        "fencing_token": 1,
        "created_at": float(sequence),
    }
    return CheckpointRecord(**{**base, **fields})


def lineage() -> list[CheckpointRecord]:
    """The good run's four checkpoints; the charge spends one attempt."""
    order: dict[str, JsonValue] = {"validate_order": GOOD_ORDER}
    return [
        checkpoint(1, "received"),
        checkpoint(2, "order_validated", outputs=order),
        checkpoint(3, "charged", attempts_left=2, outputs=order),
        checkpoint(4, "verified", status="completed", attempts_left=2, outputs=order),
    ]


def worker(
    number: int, end: str = "stopped", status: str | None = "completed", **fields: Any
) -> WorkerRecord:
    base: dict[str, Any] = {
        "worker": number,
        "owner": f"worker-{number}",
        "plan_version": "1",
        "prompt_version": "1",
        "end": end,
        "status": status,
        "started_at": 10.0 * number,
        "ended_at": 10.0 * number + 5,
    }
    return WorkerRecord(**{**base, **fields})


def tampering(kind: str, *, sequence: int | None = 3, applied: bool = True) -> TamperRecord:
    """A tampering after worker 0, when the services had seen two requests."""
    return TamperRecord(
        after_worker=0, kind=kind, sequence=sequence, time=6.0, journal_seq=2, applied=applied
    )


def grant(
    gate: str, time: float, ttl_s: float, covered: dict[str, JsonValue] | None = None
) -> GrantRecord:
    """The harness's approval at `gate`, covering `covered` (None: the gate declares nothing)."""
    return GrantRecord(
        gate=gate, time=time, expires_at=time + ttl_s, journal_seq=0, covered=covered
    )


def lie(
    kind: str = "amount",
    marks: tuple[str | int, ...] = (6001,),
    *,
    worker: int = 1,
    journal_seq: int = 1,
    delivered: bool = True,
) -> LieRecord:
    """A lying start message told to `worker` after journal #`journal_seq`: by default the
    good run's order with its amount raised (3000 → 6001)."""
    return LieRecord(
        worker=worker,
        kind=kind,
        tenant="tenant-a",
        content={"order_id": "order-1", "amount_cents": 6001},
        marks=list(marks),
        journal_seq=journal_seq,
        delivered=delivered,
    )


def schedule(**fields: Any) -> FaultSchedule:
    return FaultSchedule.model_validate({"scenario": "tiny_order", "run_id": "t", **fields})


def completed_run(**changes: Any) -> History:
    """The good run, with `changes` to any field of the history."""
    fields: dict[str, Any] = {
        "scenario": "tiny_order",
        "workflow_id": "tiny_order:1",
        "schedule": schedule(),
        "limits": LIMITS,
        "expected": [CHARGE],
        "hits": [],
        "workers": [worker(0)],
        "checkpoints": lineage(),
        "effects": [],
        "approvals": [],
        "requests": [request(1), read(2)],
        "applied": [effect(1)],
        "final_status": "completed",
        "final_state": "verified",
    }
    return History(**{**fields, **changes})


def unreadable(history: History) -> History:
    """`history` as an engine without a history reader shows it: no checkpoint, no record."""
    return history.model_copy(
        update={"readable": False, "checkpoints": [], "effects": [], "approvals": []}
    )


MAIN = "tenant-a/tiny_order:1"  # the run's origin, as its requests are signed
NEIGHBOUR = "tenant-b/tiny_order:2"


def signed(record: Any, origin: str = MAIN) -> Any:
    """A journal row (request or effect) as the harness's client signed it."""
    return replace(record, origin=origin)


def neighbour(**changes: Any) -> NeighbourRecord:
    """A second tenant's run of the same order, completed alone: its own key, its own charge
    (`ch_9`), approved by its own approver; `changes` to any field."""
    fields: dict[str, Any] = {
        "kind": "tenant",
        "tenant": "tenant-b",
        "workflow_id": "tiny_order:2",
        "origin": NEIGHBOUR,
        "before_worker": 0,
        "expected": [CHARGE],
        "expected_status": "completed",
        "final_status": "completed",
        "checkpoints": lineage(),
        "effects": [
            ledger_row(key="b/charge", workflow_id="tiny_order:2").model_copy(
                update={"receipt": Receipt(resource_id="ch_9")}
            )
        ],
        "requests": [signed(request(5, idempotency_key="b/charge"), NEIGHBOUR)],
        "applied": [signed(effect(5, idempotency_key="b/charge", resource_id="ch_9"), NEIGHBOUR)],
    }
    return NeighbourRecord(**{**fields, **changes})


def shared_world(**changes: Any) -> History:
    """The good run, signed, beside one neighbour (`neighbour()`); `changes` to any field."""
    fields: dict[str, Any] = {
        "origin": MAIN,
        "requests": [signed(request(1)), signed(read(2))],
        "applied": [signed(effect(1))],
        "effects": [ledger_row(key="order-1/create_charge")],
        "neighbours": [neighbour()],
    }
    return completed_run(**{**fields, **changes})
