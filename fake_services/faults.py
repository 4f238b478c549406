"""Fault plans: which request of which service fails, and how.

A :class:`FaultPlan` is data (pydantic, JSON round-trip) so a fault schedule can be stored with a
run and replayed. Rules pick requests by service, operation and a 1-based occurrence among the
requests matching the rule; a :class:`FaultInjector` keeps those counters. There is exactly one
decision function, :meth:`FaultInjector.decide`: the in-process transport, the real-tier client
transport (through ``POST /_admin/faults/decide``) and the app itself (for clients that do not go
through our transport) all call it, so a plan means the same thing on every path.

Network-side modes are applied by the caller's transport (see ``_network.py``); server-side modes
travel to the app in the ``x-killpoint-fault`` header and are applied there.
"""

from __future__ import annotations

import re
import threading
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

FAULT_HEADER = "x-killpoint-fault"
#: set by the app on a response the client must never see (the client raises a timeout instead)
DROP_HEADER = "x-killpoint-drop"
CLOCK_HEADER = "x-killpoint-now"  # the caller's clock reading, where the clock is not shared
# who sent a request (a tenant and a workflow), as the harness that sent it says: the services
# journal it beside the request and its effect and never act on it (the oracle's ground truth)
ORIGIN_HEADER = "x-killpoint-origin"


class FaultMode(StrEnum):
    LOST_REQUEST = "lost_request"
    LOST_RESPONSE = "lost_response"
    TIMEOUT_BEFORE_COMMIT = "timeout_before_commit"
    ERROR_BEFORE_COMMIT = "error_before_commit"
    ERROR_AFTER_COMMIT = "error_after_commit"
    SLOW = "slow"
    DUPLICATE_DELIVERY = "duplicate_delivery"
    WITHHELD_VISIBILITY = "withheld_visibility"
    CORRUPT_ARTIFACT = "corrupt_artifact"
    MISSING_ARTIFACT = "missing_artifact"
    OVERWRITTEN = "overwritten"


NETWORK_MODES = frozenset(
    {
        FaultMode.LOST_REQUEST,
        FaultMode.LOST_RESPONSE,
        FaultMode.SLOW,
        FaultMode.DUPLICATE_DELIVERY,
    }
)

# Modes that only make sense for one operation of one service.
_ONLY_FOR: dict[FaultMode, tuple[str, set[str]]] = {
    FaultMode.WITHHELD_VISIBILITY: ("publisher", {"publish"}),
    FaultMode.CORRUPT_ARTIFACT: ("artifacts", {"get"}),
    FaultMode.MISSING_ARTIFACT: ("artifacts", {"get"}),
    FaultMode.OVERWRITTEN: ("files", {"delete"}),
}

# (method, path pattern) -> (service, operation); the one place that names operations.
OPERATIONS: tuple[tuple[str, re.Pattern[str], str, str], ...] = tuple(
    (method, re.compile(pattern), service, operation)
    for method, pattern, service, operation in (
        ("POST", r"/payments/charges", "payments", "create_charge"),
        ("GET", r"/payments/charges", "payments", "charges_by_order"),
        ("GET", r"/payments/charges/by-key/[^/]+", "payments", "charge_by_key"),
        ("POST", r"/payments/refunds", "payments", "refund"),
        ("GET", r"/payments/refunds/by-key/[^/]+", "payments", "refund_by_key"),
        ("POST", r"/cms/posts", "cms", "create_post"),
        ("GET", r"/cms/posts", "cms", "posts_by_slug"),
        ("GET", r"/cms/posts/[^/]+", "cms", "get_post"),
        ("POST", r"/mailer/messages", "mailer", "send"),
        ("POST", r"/outbound/messages", "outbound", "send"),
        ("GET", r"/outbound/messages", "outbound", "search"),
        ("POST", r"/publisher/publications", "publisher", "publish"),
        ("GET", r"/publisher/publications/[^/]+", "publisher", "read"),
        ("PUT", r"/artifacts/[^/]+", "artifacts", "put"),
        ("GET", r"/artifacts/[^/]+", "artifacts", "get"),
        ("PUT", r"/files/.+", "files", "put"),
        ("PATCH", r"/files/.+", "files", "append"),
        ("GET", r"/files/.+", "files", "get"),
        ("DELETE", r"/files/.+", "files", "delete"),
    )
)
SERVICES = frozenset(service for _, _, service, _ in OPERATIONS)


def classify(method: str, path: str) -> tuple[str, str] | None:
    """The (service, operation) a request addresses, or None (admin or unknown paths)."""
    for op_method, pattern, service, operation in OPERATIONS:
        if method == op_method and pattern.fullmatch(path):
            return service, operation
    return None


class Fault(BaseModel):
    """A decision for one request: the mode and its parameters."""

    model_config = ConfigDict(frozen=True)

    mode: FaultMode
    params: dict[str, Any] = Field(default_factory=dict)

    @property
    def network_side(self) -> bool:
        return self.mode in NETWORK_MODES

    def encode(self) -> str:
        return self.model_dump_json()

    @classmethod
    def decode(cls, header: str | None) -> Fault | None:
        if header is None or header == "none":
            return None
        return cls.model_validate_json(header)


# Each mode's parameters and their bounds. A plan is read from files people edit: a misspelt
# parameter is refused, not ignored, and no value makes a run endless (a year's sleep, a
# million copies of one request).
MAX_OCCURRENCE = 100_000
PARAMS: dict[FaultMode, dict[str, tuple[type, float, float]]] = {
    FaultMode.SLOW: {"delay_s": (float, 0.0, 3600.0)},
    FaultMode.WITHHELD_VISIBILITY: {
        "after_reads": (int, 0, MAX_OCCURRENCE),
        "after_s": (float, 0.0, 366 * 86_400.0),
    },
    FaultMode.DUPLICATE_DELIVERY: {"copies": (int, 2, 100)},
}


def _check_params(mode: FaultMode, params: dict[str, Any]) -> None:
    allowed = PARAMS.get(mode, {})
    for name, value in params.items():
        if name not in allowed:
            takes = f"; it takes {', '.join(allowed)}" if allowed else ""
            raise ValueError(f"{mode} takes no parameter {name!r}{takes}")
        kind, low, high = allowed[name]
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or (kind is int and not isinstance(value, int)) or not low <= value <= high:
            what = "an integer" if kind is int else "a number"
            got = repr(value) if number else type(value).__name__
            raise ValueError(f"{mode} {name} must be {what} from {low:g} to {high:g}, not {got}")


class FaultRule(BaseModel):
    """Fail the ``occurrence``-th request (every one if None) matching service and operation.

    Params: ``slow`` needs ``delay_s``; ``withheld_visibility`` takes ``after_reads`` and/or
    ``after_s`` (neither: never visible); ``overwritten`` (files ``delete``): another
    client saves a newer version of the object just before the request is served.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    service: str
    operation: str | None = None
    occurrence: int | None = Field(default=None, ge=1, le=MAX_OCCURRENCE)
    mode: FaultMode
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> FaultRule:
        if self.service not in SERVICES:
            raise ValueError(f"unknown service {self.service!r}; known: {sorted(SERVICES)}")
        known = {op for _, _, svc, op in OPERATIONS if svc == self.service}
        if self.operation is not None and self.operation not in known:
            raise ValueError(f"{self.service} has no operation {self.operation!r}: {known}")
        if self.mode in _ONLY_FOR:
            service, operations = _ONLY_FOR[self.mode]
            if self.service != service or self.operation not in operations:
                raise ValueError(f"{self.mode} applies to {service} {sorted(operations)} only")
        if self.mode is FaultMode.SLOW and "delay_s" not in self.params:
            raise ValueError("slow needs params.delay_s")
        _check_params(self.mode, self.params)
        return self

    def matches(self, service: str, operation: str) -> bool:
        return self.service == service and self.operation in (None, operation)

    def fault(self) -> Fault:
        return Fault(mode=self.mode, params=self.params)


class FaultPlan(BaseModel):
    """An ordered list of rules; when several fire on one request, the first wins.

    ``seed`` seeds the services' realism draws (lags, other customers: ``realism.py``); the
    harness gives each run its run id, so runs sample the draws and a replay repeats them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rules: tuple[FaultRule, ...] = ()
    seed: str = ""

    def seeded(self, seed: str) -> FaultPlan:
        """This plan with `seed`, unless it names a seed of its own."""
        return self if self.seed else self.model_copy(update={"seed": seed})

    @classmethod
    def of(cls, *rules: FaultRule) -> FaultPlan:
        return cls(rules=rules)


class FaultInjector:
    """A plan plus its per-rule counters: the single, deterministic fault decision."""

    def __init__(self, plan: FaultPlan | None = None) -> None:
        self._lock = threading.Lock()
        self.set_plan(plan or FaultPlan())

    @property
    def plan(self) -> FaultPlan:
        return self._plan

    def set_plan(self, plan: FaultPlan) -> None:
        """Install a plan and restart its counters from zero."""
        with self._lock:
            self._plan = plan
            self._counts = [0] * len(plan.rules)

    def counts(self) -> list[int]:
        """How many requests each rule has matched so far."""
        with self._lock:
            return list(self._counts)

    def decide(self, service: str, operation: str) -> Fault | None:
        """Count this request against every matching rule; return the first rule that fires."""
        chosen: Fault | None = None
        with self._lock:
            for index, rule in enumerate(self._plan.rules):
                if not rule.matches(service, operation):
                    continue
                self._counts[index] += 1
                fires = rule.occurrence is None or rule.occurrence == self._counts[index]
                if fires and chosen is None:
                    chosen = rule.fault()
        return chosen
