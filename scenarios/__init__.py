"""The scenario catalogue: every workflow the campaigns crash, by name, with its named cases.

A campaign asks for scenarios by name (`get("order_saga")`) or walks `CATALOGUE`. Each entry is a
`Scenario`: the workflow, a per-run input maker (runs share one store and one set of services, so
business keys carry the run id), the adapters, the effects the services should show, and the
rows of the seeds' fault tables that run on it (`scenarios.cases`, `scenarios.tamper_cases`,
`scenarios.operator_cases`, `scenarios.time_cases`).
`catalogue()` is what this package registers under the `killpoint.catalogues` entry point,
mutant engines included.
"""

from __future__ import annotations

if __name__ != "killpoint.scenarios":  # a checkout's folder, imported by its bare name
    raise ImportError(
        "import killpoint.scenarios, not scenarios: the folder installs under killpoint, "
        "and a second name would load a second copy of every module"
    )

from dataclasses import replace

from killpoint.harness.catalogue import Catalogue
from killpoint.harness.scenario import ExpectedEffect, GatePolicy, Scenario
from killpoint.scenarios import (
    approval_refund,
    batch,
    email,
    expensive_reuse,
    file_report,
    handoff,
    order_saga,
    research_publish,
)
from killpoint.scenarios.adapters import SERVICES, adapters_for
from killpoint.scenarios.cases import CASES
from killpoint.scenarios.operator_cases import OPERATOR_CASES
from killpoint.scenarios.tamper_cases import TAMPER_CASES
from killpoint.scenarios.time_cases import TIME_CASES

__all__ = [
    "CATALOGUE",
    "ExpectedEffect",
    "GatePolicy",
    "Scenario",
    "adapters_for",
    "catalogue",
    "get",
]


def _with_cases(scenario: Scenario) -> Scenario:
    named = (*CASES, *TAMPER_CASES, *OPERATOR_CASES, *TIME_CASES)
    return replace(scenario, cases=tuple(c for c in named if c.schedule.scenario == scenario.name))


CATALOGUE: dict[str, Scenario] = {
    s.name: _with_cases(s)
    for s in (
        research_publish.SCENARIO,
        research_publish.THIN_DRAFT_SCENARIO,
        order_saga.SCENARIO,
        order_saga.REFUND_SCENARIO,
        approval_refund.SCENARIO,
        handoff.SCENARIO,
        handoff.INCOMPATIBLE_SCENARIO,
        batch.SCENARIO,
        email.SCENARIO,
        email.OUTBOX_SCENARIO,
        expensive_reuse.SCENARIO,
        file_report.SCENARIO,
    )
}


def get(name: str) -> Scenario:
    """The scenario called `name`; a `KillpointError` naming the known ones otherwise."""
    return Catalogue(scenarios=CATALOGUE).scenario(name)


def catalogue() -> Catalogue:
    """killpoint's own catalogue: the scenarios, the mutants (which import the reference
    engine, so only when asked) and the flags of the fake services' adapters."""
    from killpoint.scenarios.mutants import MUTANTS

    return Catalogue(scenarios=CATALOGUE, mutants=MUTANTS, services=SERVICES)
