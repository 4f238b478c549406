"""The scenario contract: what a team writes to point killpoint at its own agent.

A scenario is the harness's unit of work: a workflow (an explicit state machine of steps), a
per-run input maker (runs share one store and one set of services, so business keys carry the
run id), the adapters that connect its effect steps to services, and what the oracle needs that
no engine can be trusted to say — which effects the workflow is *meant* to cause, named the
service's way, how the harness plays the human at each gate, and how a run should end. Named
cases travel with their scenario: a fault schedule and the recovery the seeds expect of it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import httpx
from pydantic import JsonValue

from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.errors import DefinitionError
from killpoint.contract.records import BudgetLimits, RunStatus
from killpoint.contract.workflow import Workflow
from killpoint.fake_services.faults import OPERATIONS
from killpoint.harness.objectives import RecoveryObjectives

if TYPE_CHECKING:
    from killpoint.harness.history import History
    from killpoint.harness.schedule import FaultSchedule

# A named case's expected recovery: None when the history shows it, else what went wrong.
Expect = Callable[["History"], str | None]


class NotApplicable(str):
    """What an `Expect` returns when the case asks of the engine what it does not keep (a
    ledger, a lease, version lineage): the case is reported unknown, never violated."""


@dataclass(frozen=True)
class ExpectedEffect:
    """One logical external action the workflow should cause once, named the service's way.

    `operation` is the *service's* operation (`create_charge`), not the step's (`charge`): the
    oracle counts what the service journal holds. Some keys exist only once an earlier effect
    happened: a refund's business key is the id of the charge it refunds. Such an effect names
    its `parent`; the harness reads the real key from the services' journal, and
    `business_key` is then only a readable label.
    """

    service: str
    business_key: str
    irreversible: bool = False
    operation: str | None = None  # the service's operation, where one service has several
    parent: ExpectedEffect | None = None  # the business key is the resource this one created
    verifiable: bool = True  # a read can prove it (the oracle demands one before completion)
    gate: str | None = None  # the approval gate that must be valid when it is requested

    def __post_init__(self) -> None:
        # A step's name here (`charge`) matches nothing in the journal: every run would "fail"
        # with the effect taken 0 times. Refuse it now, naming what the service does apply.
        known = EFFECT_OPERATIONS.get(self.service)
        if self.operation is not None and known is not None and self.operation not in known:
            raise DefinitionError(
                f"ExpectedEffect({self.service!r}, {self.business_key!r}): {self.service} has no "
                f"effect operation {self.operation!r}; its operations are "
                f"{', '.join(sorted(known))} (the service's name for it, not the step's)"
            )


# The operations that apply an effect, by service, as the services' journals name them (a write
# is any request that is not a GET); a service outside this table is not checked.
EFFECT_OPERATIONS: Mapping[str, frozenset[str]] = {
    service: frozenset(op for m, _, s, op in OPERATIONS if s == service and m != "GET")
    for service in {s for _, _, s, _ in OPERATIONS}
}


@dataclass(frozen=True)
class GatePolicy:
    """How the harness answers an approval request at one gate, and what its approval covers.

    `covers` maps a field of the gated request's body to the input field the approver saw for
    it: `{"amount_cents": "refund_cents"}` says the refund sent may not exceed the refund the
    input asked for. A number must be within (at most) the approved one; anything else (a
    target, a scope) must equal it. `authority` judges each gated call by it, and answers
    unknown for a gate that declares nothing."""

    actor: str = "operator@example.test"
    ttl_s: float = 3600.0
    covers: Mapping[str, str] = field(default_factory=dict)

    def covered(self, input: Mapping[str, JsonValue]) -> dict[str, JsonValue] | None:
        """What an approval given on `input` covers: each body field with the value the
        approver saw; None when the policy declares nothing."""
        if not self.covers:
            return None
        return {body: input[name] for body, name in self.covers.items() if name in input}


@dataclass(frozen=True)
class NamedCase:
    """A row of a seed's fault table: a schedule and the recovery the seed expects of it,
    judged beside the oracle (as one more verdict, `expected_recovery`)."""

    name: str
    seed: str  # the row of the seed it comes from
    schedule: FaultSchedule
    expected: str  # the seed's expected recovery behaviour, in words
    expect: Expect


@dataclass(frozen=True)
class Scenario:
    """A unit of work the harness runs an engine on (the catalogue's pages list each one's).

    Attributes:
        name: what `killpoint run -s NAME` calls it.
        description: one line, for listings and reports.
        workflow: the state machine of steps the engine runs.
        make_input: one run's input from its run id; business keys carry the run id, because
            the runs of a campaign share one store and one set of services.
        make_adapters: the effect adapters, by service, on the worker's HTTP client.
        expected_effects: the effects one run must cause exactly once, from its input, named
            the service's way (`ExpectedEffect`).
        limits: the budget a run may spend across every restart.
        gates: how the harness plays the human at each approval gate (`GatePolicy`).
        expected_status: how a fault-free run ends.
        cases: the seeds' named cases that travel with it (`NamedCase`).
        objectives: the RPO and RTO every crash is judged against; None: not declared.
    """

    name: str
    description: str
    workflow: Workflow
    make_input: Callable[[str], Mapping[str, JsonValue]]
    make_adapters: Callable[[httpx.Client], Mapping[str, EffectAdapter]]
    expected_effects: Callable[[Mapping[str, JsonValue]], tuple[ExpectedEffect, ...]]
    limits: BudgetLimits = field(default_factory=BudgetLimits)
    gates: Mapping[str, GatePolicy] = field(default_factory=dict)
    expected_status: RunStatus = RunStatus.COMPLETED
    cases: tuple[NamedCase, ...] = ()
    # the RPO and RTO every crash is judged against (`harness.objectives`); None: not declared
    objectives: RecoveryObjectives | None = None

    def case(self, run_id: str) -> NamedCase | None:
        """The named case whose schedule carries this run id, if any (for a replay)."""
        return next((c for c in self.cases if c.schedule.run_id == run_id), None)
