"""payments: the idempotent service (Stripe-like ``Idempotency-Key``).

The well-behaved downstream, held to Stripe's rules (README.md): a retry with the same key and
the same body replays the original response and applies nothing; the same key with a different
body is a client bug and gets Stripe's 400 ``idempotency_error``, and one that comes while the
key's first request is still being processed gets Stripe's 409 ``idempotency_key_in_use``.
Refunds are objects of their own, keyed the same way: several partial refunds of one charge are
each applied, up to what is left of the charge. Lookups by key let an engine reconcile an
unknown outcome before it decides to retry; a search by order id finds other customers' charges
too (`realism.py`).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from killpoint.fake_services import realism
from killpoint.fake_services._service import (
    Reply,
    RouteTable,
    Services,
    bind,
    error,
    parse,
    read_json,
)
from killpoint.fake_services.faults import Fault, FaultMode
from killpoint.fake_services.journal import RequestRecord
from killpoint.fake_services.models import Charge, ChargeRequest, Refund, RefundRequest


def _keyed_create(services: Services, kind: str, record: RequestRecord) -> Reply | None:
    """Replay or refuse a request whose idempotency key was seen before; None if it is new."""
    if record.idempotency_key is None:
        return None
    busy = services.state.get("in_flight", f"{kind}:{record.idempotency_key}")
    if busy is not None and record.time < busy["until"]:
        return error(
            409,
            "idempotency_key_in_use",
            message="another request with this Idempotency-Key is still being processed",
            idempotency_key=record.idempotency_key,
        )
    seen = services.state.by_idempotency_key(kind, record.idempotency_key)
    if seen is None:
        return None
    stored_fingerprint, document = seen
    if stored_fingerprint != record.fingerprint:
        return error(
            400,
            "idempotency_error",
            message="Keys for idempotent requests can only be used with the same parameters"
            " they were first used with",
            idempotency_key=record.idempotency_key,
        )
    return Reply(201, document, outcome="replayed", headers={"idempotent-replayed": "true"})


def _with_neighbours(services: Services, order_id: str) -> None:
    """Put other customers' charges under `order_id` in place the first time it is named.

    Order ids are unique per shop, not per payment account, so a real account already holds
    other customers' charges under the run's order ids. They are written on the order id's
    first mention (a charge or a search), before anything the run does with it, and never
    journaled: they are the world the run starts in, not its effects."""
    state = services.state
    if state.get("neighbours", order_id) is not None:
        return
    ordinal = state.count("neighbours") + 1
    state.insert("neighbours", order_id, {})
    now = services.clock.now()
    for other in realism.neighbours(realism.ACTIVE, services.faults.plan.seed, ordinal):
        charge = Charge(
            id=state.next_id("charge", "ch"),
            order_id=order_id,
            amount_cents=other.amount_cents,
            currency="EUR",
            status="succeeded",
            idempotency_key=other.idempotency_key,
            created_at=now - other.age_s,
            customer=other.customer,
        )
        state.insert(
            "charge",
            charge.id,
            charge.model_dump(),
            idempotency_key=other.idempotency_key,
            lookup=order_id,
            fingerprint="",
        )


def _hold_key(services: Services, kind: str, record: RequestRecord, fault: Fault | None) -> None:
    """A slow request keeps its key in flight until its reply is sent (`time + delay_s`)."""
    if record.idempotency_key is None or fault is None or fault.mode is not FaultMode.SLOW:
        return
    key, held = f"{kind}:{record.idempotency_key}", {"until": record.time + fault.params["delay_s"]}
    if services.state.get("in_flight", key) is None:
        services.state.insert("in_flight", key, held)
    else:
        services.state.replace("in_flight", key, held)


def _charge(services: Services, parsed: ChargeRequest, record: RequestRecord) -> Reply:
    state = services.state
    _with_neighbours(services, parsed.order_id)
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


async def create_charge(services: Services, request: Request) -> Response:
    body = await read_json(request)
    parsed = parse(ChargeRequest, body)

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        if isinstance(parsed, Reply):
            return parsed
        refused = _keyed_create(services, "charge", record)
        if refused is not None:
            return refused
        _hold_key(services, "charge", record, fault)
        return _charge(services, parsed, record)

    return await services.handle(
        request,
        service="payments",
        operation="create_charge",
        business_key=None if isinstance(parsed, Reply) else parsed.order_id,
        body=body,
        work=work,
    )


def _refund(services: Services, parsed: RefundRequest, record: RequestRecord) -> Reply:
    state = services.state
    charge = state.get("charge", parsed.charge_id)
    if charge is None:
        return error(404, "not_found", charge_id=parsed.charge_id)
    refunded = sum(r["amount_cents"] for r in state.by_lookup("refund", parsed.charge_id))
    remaining = charge["amount_cents"] - refunded
    if parsed.amount_cents > remaining:  # Stripe refuses only what exceeds the unrefunded rest
        code = "charge_already_refunded" if remaining == 0 else "refund_exceeds_remaining"
        return error(400, code, refunded_cents=refunded, remaining_cents=remaining)
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


async def refund(services: Services, request: Request) -> Response:
    body = await read_json(request)
    parsed = parse(RefundRequest, body)

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        if isinstance(parsed, Reply):
            return parsed
        refused = _keyed_create(services, "refund", record)
        if refused is not None:
            return refused
        _hold_key(services, "refund", record, fault)
        return _refund(services, parsed, record)

    return await services.handle(
        request,
        service="payments",
        operation="refund",
        business_key=None if isinstance(parsed, Reply) else parsed.charge_id,
        body=body,
        work=work,
    )


async def charges_by_order(services: Services, request: Request) -> Response:
    """Every charge of the account under an order id, oldest first (Stripe's charge search by
    `metadata['order_id']`): other customers' ones included, each with its `customer`."""
    order_id = request.query_params.get("order_id")

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        if not order_id:
            return error(422, "invalid_request", message="query parameter order_id is required")
        _with_neighbours(services, order_id)
        return Reply(200, {"charges": services.state.by_lookup("charge", order_id)})

    return await services.handle(
        request,
        service="payments",
        operation="charges_by_order",
        business_key=order_id,
        body={"order_id": order_id},
        work=work,
    )


async def _by_key(services: Services, request: Request, kind: str, operation: str) -> Response:
    """A charge or refund by the idempotency key it was created with (404 if none was)."""
    key = request.path_params["key"]

    def work(record: RequestRecord, fault: Fault | None) -> Reply:
        seen = services.state.by_idempotency_key(kind, key)
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


async def charge_by_key(services: Services, request: Request) -> Response:
    return await _by_key(services, request, "charge", "charge_by_key")


async def refund_by_key(services: Services, request: Request) -> Response:
    return await _by_key(services, request, "refund", "refund_by_key")


ROUTES: RouteTable = (
    ("POST", "/payments/charges", create_charge),
    ("GET", "/payments/charges", charges_by_order),
    ("GET", "/payments/charges/by-key/{key}", charge_by_key),
    ("POST", "/payments/refunds", refund),
    ("GET", "/payments/refunds/by-key/{key}", refund_by_key),
)


def routes(services: Services) -> list[Route]:
    return bind(services, ROUTES)
