"""payments: the idempotent service (Stripe-like ``Idempotency-Key``).

The well-behaved downstream: a retry with the same key and the same body replays the original
response and applies nothing; the same key with a different body is a client bug and gets a 422.
Refunds are the compensation of a charge and are keyed the same way. Lookups by key let an
engine reconcile an unknown outcome before it decides to retry.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from killpoint.fake_services._service import Reply, Services, error, parse, read_json
from killpoint.fake_services.faults import Fault
from killpoint.fake_services.journal import RequestRecord
from killpoint.fake_services.models import Charge, ChargeRequest, Refund, RefundRequest


def _keyed_create(services: Services, kind: str, record: RequestRecord) -> Reply | None:
    """Replay or refuse a request whose idempotency key was seen before; None if it is new."""
    if record.idempotency_key is None:
        return None
    seen = services.state.by_idempotency_key(kind, record.idempotency_key)
    if seen is None:
        return None
    stored_fingerprint, document = seen
    if stored_fingerprint != record.fingerprint:
        return error(
            422,
            "idempotency_key_reused",
            message="this Idempotency-Key was used with a different request body",
            idempotency_key=record.idempotency_key,
        )
    return Reply(201, document, outcome="replayed", headers={"idempotent-replayed": "true"})


def routes(services: Services) -> list[Route]:
    state = services.state

    async def create_charge(request: Request) -> Response:
        body = await read_json(request)
        parsed = parse(ChargeRequest, body)

        def work(record: RequestRecord, fault: Fault | None) -> Reply:
            if isinstance(parsed, Reply):
                return parsed
            replay = _keyed_create(services, "charge", record)
            if replay is not None:
                return replay
            charge = Charge(
                id=state.next_id("charge", "ch"),
                status="succeeded",
                idempotency_key=record.idempotency_key,
                created_at=record.time,
                **parsed.model_dump(),
            )
            document = charge.model_dump()
            state.insert(
                "charge",
                charge.id,
                document,
                idempotency_key=record.idempotency_key,
                lookup=charge.order_id,
                fingerprint=record.fingerprint,
            )
            return Reply(201, document, resource_id=charge.id, outcome="applied")

        business_key = None if isinstance(parsed, Reply) else parsed.order_id
        return await services.handle(
            request,
            service="payments",
            operation="create_charge",
            business_key=business_key,
            body=body,
            work=work,
        )

    async def refund(request: Request) -> Response:
        body = await read_json(request)
        parsed = parse(RefundRequest, body)

        def work(record: RequestRecord, fault: Fault | None) -> Reply:
            if isinstance(parsed, Reply):
                return parsed
            replay = _keyed_create(services, "refund", record)
            if replay is not None:
                return replay
            charge = state.get("charge", parsed.charge_id)
            if charge is None:
                return error(404, "not_found", charge_id=parsed.charge_id)
            refunded = sum(r["amount_cents"] for r in state.by_lookup("refund", parsed.charge_id))
            if refunded + parsed.amount_cents > charge["amount_cents"]:
                return error(422, "refund_exceeds_charge", refunded_cents=refunded)
            refund = Refund(
                id=state.next_id("refund", "re"),
                status="succeeded",
                idempotency_key=record.idempotency_key,
                created_at=record.time,
                **parsed.model_dump(),
            )
            document = refund.model_dump()
            state.insert(
                "refund",
                refund.id,
                document,
                idempotency_key=record.idempotency_key,
                lookup=refund.charge_id,
                fingerprint=record.fingerprint,
            )
            return Reply(201, document, resource_id=refund.id, outcome="applied")

        business_key = None if isinstance(parsed, Reply) else parsed.charge_id
        return await services.handle(
            request,
            service="payments",
            operation="refund",
            business_key=business_key,
            body=body,
            work=work,
        )

    def by_key(kind: str, operation: str) -> Any:
        async def endpoint(request: Request) -> Response:
            key = request.path_params["key"]

            def work(record: RequestRecord, fault: Fault | None) -> Reply:
                seen = state.by_idempotency_key(kind, key)
                if seen is None:
                    return error(404, "not_found", outcome="not_found", idempotency_key=key)
                found = seen[1]
                read_key = found.get("order_id") or found.get("charge_id")
                return Reply(200, found, business_key=read_key)

            return await services.handle(
                request,
                service="payments",
                operation=operation,
                business_key=None,
                body={"idempotency_key": key},
                work=work,
            )

        return endpoint

    return [
        Route("/payments/charges", create_charge, methods=["POST"]),
        Route("/payments/charges/by-key/{key}", by_key("charge", "charge_by_key"), methods=["GET"]),
        Route("/payments/refunds", refund, methods=["POST"]),
        Route("/payments/refunds/by-key/{key}", by_key("refund", "refund_by_key"), methods=["GET"]),
    ]
