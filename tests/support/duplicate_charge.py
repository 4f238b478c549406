"""The history of the seed's classic violation, as the in-process runner records it.

Worker 0 dies after the payment service committed a charge and before the response was read;
worker 1 (a mutant without the effect ledger) charges again, so the payments journal holds two
charges for one order. Absolute journal sequence numbers, one shared injected clock; built from
the harness's own typed records (`HitRecord`, `WorkerRecord`, the journal's `RequestRecord` and
`AppliedEffect`), so a change to any of them shows here first.
"""

from __future__ import annotations

from typing import Any

from killpoint.contract.records import BudgetLimits
from killpoint.fake_services.journal import AppliedEffect, RequestRecord
from killpoint.harness.history import ExpectedEffectRecord, History, HitRecord, WorkerRecord
from killpoint.harness.protocol import CheckpointRecord
from killpoint.harness.results import EvidenceRef, Verdict
from killpoint.harness.schedule import FaultSchedule

T0 = 1_800_000_000.0
DOWN = T0 + 60.0  # when worker 1 starts: the runner's default downtime after a death
BAD_LABEL = "charge:transport.response_received"  # where worker 0 dies
W0_HITS = [
    "lease.acquired",
    "validate_order:step.begin",
    "validate_order:checkpoint.built",
    "validate_order:checkpoint.committed",
    "charge:step.begin",
    "charge:effect.intent_built",
    "charge:effect.started",
    BAD_LABEL,
]
W1_HITS = [
    "lease.acquired",
    "charge:step.begin",
    "charge:effect.intent_built",
    "charge:effect.started",
    BAD_LABEL,
    "charge:effect.receipt_committed",
    "charge:checkpoint.built",
    "charge:checkpoint.committed",
    "ship:step.begin",
    "ship:effect.started",
    "ship:transport.response_received",
    "ship:checkpoint.built",
    "ship:checkpoint.committed",
]


def _hit(worker: int, label: str, time: float, journal_seq: int) -> HitRecord:
    step, _, boundary = label.rpartition(":")
    return HitRecord(
        worker=worker,
        step=step or None,
        boundary=boundary,
        occurrence=1,
        time=time,
        journal_seq=journal_seq,
    )


def _request(seq: int, service: str, operation: str, outcome: str, t: float) -> RequestRecord:
    return RequestRecord(seq, service, operation, None, "order-r7", f"fp-{operation}", t, outcome)


def _applied(seq: int, request: RequestRecord) -> AppliedEffect:
    """The effect a request applied, as the journal records it (effects are numbered apart)."""
    assert request.business_key is not None
    return AppliedEffect(
        seq=seq,
        service=request.service,
        operation=request.operation,
        business_key=request.business_key,
        idempotency_key=request.idempotency_key,
        fingerprint=request.fingerprint,
        time=request.time,
        resource_id=f"ch_00000{seq}",
    )


def _checkpoint(sequence: int, state: str, t: float, status: str = "running") -> CheckpointRecord:
    return CheckpointRecord(sequence=sequence, state=state, status=status, created_at=t)


def _worker(number: int, hits: int, at: float, **ending: Any) -> WorkerRecord:
    return WorkerRecord(
        worker=number,
        owner=f"worker-{number}",
        plan_version="plan@1",
        prompt_version="prompt@1",
        hits=hits,
        started_at=at,
        ended_at=at,
        **ending,
    )


def _duplicate_charge_hits() -> list[HitRecord]:
    """Worker 0 sees the first charge land; worker 1 the second, then the shipment."""
    hits = [_hit(0, label, T0, 0 if i < 7 else 1) for i, label in enumerate(W0_HITS)]
    return hits + [
        _hit(1, label, DOWN, 1 if i < 4 else (2 if i < 10 else 3))
        for i, label in enumerate(W1_HITS)
    ]


def duplicate_charge_history(schedule: FaultSchedule) -> History:
    requests = [
        _request(1, "payments", "create_charge", "applied", T0),
        _request(2, "payments", "create_charge", "applied", DOWN),
        _request(3, "publisher", "publish", "lost_response", DOWN),
    ]
    killed = "killed at w0 charge:transport.response_received"
    return History(
        scenario="order_saga",
        workflow_id="order_saga:r7",
        schedule=schedule,
        limits=BudgetLimits(),
        expected=[ExpectedEffectRecord(service="payments", business_key="order-r7")],
        hits=_duplicate_charge_hits(),
        workers=[
            _worker(0, len(W0_HITS), T0, end="killed", reason=killed, journal_seq_end=1),
            _worker(
                1,
                len(W1_HITS),
                DOWN,
                end="stopped",
                status="completed",
                state="shipped",
                sequence=4,
                journal_seq_end=3,
            ),
        ],
        checkpoints=[
            _checkpoint(1, "received", T0),
            _checkpoint(2, "validated", T0),
            _checkpoint(3, "charged", DOWN),
            _checkpoint(4, "shipped", DOWN, status="completed"),
        ],
        effects=[],
        approvals=[],
        requests=requests,
        applied=[_applied(1, requests[0]), _applied(2, requests[1])],
        final_status="completed",
        final_state="shipped",
    )


def violation_verdict() -> Verdict:
    return Verdict(
        checker="single_effect",
        valid=False,
        summary="payments charged order-r7 twice",
        evidence=[
            "journal #1: payments.create_charge [order-r7] at t=1800000000.0 → applied",
            "journal #2: payments.create_charge [order-r7] at t=1800000060.0 → applied",
        ],
        refs=[
            EvidenceRef(kind="request", index=1),
            EvidenceRef(kind="request", index=2),
            EvidenceRef(kind="effect", index=2),
            EvidenceRef(kind="worker", index=0),
            EvidenceRef(kind="hit", index=7),
        ],
    )
