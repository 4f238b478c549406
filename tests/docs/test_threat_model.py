"""The threat model (`docs/threat-model.md`) is complete and true to the code: every requirement of
the seeds has its row, every row names faults that exist, checkers that exist and mutants that
exist, every mutant and every checker is named by some row, and each mutant of a row is caught
(in its pinned hunt) by one of the row's checkers."""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from killpoint.fake_services import realism
from killpoint.fake_services.faults import FaultMode
from killpoint.harness.checkers import CHECKERS
from killpoint.harness.results import RunKind
from killpoint.harness.schedule import FaultSchedule
from killpoint.harness.tampering import TAMPER_KINDS
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS
from tests.support.blocks import ROOT
from tests.support.pins import PINS

PAGE = ROOT / "docs" / "threat-model.md"
CASE_CHECKER = "expected_recovery"  # a named case's own expectation, judged beside the oracle

# Each requirement of the seeds, as its row begins: a row of their tables, a common mistake or
# pitfall, a recovery decision, a line of a test matrix, a rule their steps state.
REQUIRED = (
    # seed 000, the checkpoint fields
    "Workflow and lineage IDs",
    "State-machine position",
    "Validated input snapshot",
    "Model, prompt, tool, and schema versions",
    "Tool intent and idempotency key",
    "Tool receipt and reconciliation status",
    "Approval and authorization state",
    "Artifacts and provenance",
    "Budgets and stop conditions",
    "Pending work and next safe action",
    # seed 000, the components
    "Workflow state store",
    "Effect ledger",
    "Artifact store",
    "Queue or scheduler",
    "Lease manager",
    "Policy and approval store",
    "Observability pipeline",
    # seed 000, the fault-injection matrix
    "Crash before external call",
    "Crash after downstream commit but before response",
    "Crash after checkpoint commit",
    "Two workers recover simultaneously",
    "Approval expires during downtime",
    "Checkpoint schema is old",
    "Artifact is missing or hash differs",
    "Model or prompt version changes",
    "Checkpoint record is tampered",
    # seed 000, the common mistakes
    "Saving only the conversation",
    "Generating a fresh idempotency key on resume",
    "Marking a timeout as a failure",
    "Checkpointing unvalidated model output",
    "Ignoring version drift",
    "Letting restarts reset limits",
    "Assuming the queue is the database",
    "Testing only graceful shutdown",
    # seed 000, security and operations
    "Do not serialize secrets into a checkpoint",
    "Tenant isolation",
    "Plan deployment around in-flight runs",
    "Operator tools",
    "A recovery failure should enter an operator queue",
    # seed 001, the recovery decisions
    "prepared:",
    "started:",
    "committed:",
    "verified:",
    "failed:",
    "An irreversible action of unknown status",
    # seed 001, the pitfalls
    "Saving only conversation history",
    "Updating state after a call without a write-ahead record",
    "Generating a fresh idempotency key per attempt",
    'A global "completed" flag',
    "Compensation is not rollback",
    # seed 001, the test matrix and the steps
    "Kill the worker before and after each external call",
    "Duplicate queue deliveries",
    "Delay one worker until its lease expires",
    "Return a success response while withholding the visible effect",
    "Change the prompt version halfway",
    "For emails",
    "For file writes",
    "For deletes",
    "Leases need expirations and fencing tokens",
    "Verify before declaring completion",
)


@dataclass(frozen=True)
class Row:
    requirement: str
    seed: str
    faults: tuple[str, ...]
    checkers: tuple[str, ...]
    mutants: tuple[str, ...]


def _names(cell: str) -> tuple[str, ...]:
    return tuple(re.findall(r"`([^`]+)`", cell))


def rows() -> list[Row]:
    found = []
    for line in PAGE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[0] in ("requirement", "---"):
            continue
        requirement, seed, faults, checkers, mutants = cells
        found.append(Row(requirement, seed, _names(faults), _names(checkers), _names(mutants)))
    return found


def _fields(model: type) -> set[str]:
    return {f.name for f in dataclasses.fields(model)}


# each kind of fault the table may name, and the names that exist of it
FAULTS: dict[str, Callable[[], set[str]]] = {
    "case": lambda: {c.name for s in CATALOGUE.values() for c in s.cases},
    "phase": lambda: set(typing.get_args(RunKind)) - {"clean", "replay", "named"},
    "network": lambda: {m.value for m in FaultMode},
    "tamper": lambda: set(TAMPER_KINDS),
    "schedule": lambda: set(FaultSchedule.model_fields) - {"version", "scenario", "run_id"},
    "realism": lambda: _fields(realism.Realism) - {"seed"},
    "tier": lambda: {"real"},
}


def test_the_page_has_a_row_for_every_requirement_of_the_seeds() -> None:
    requirements = [r.requirement for r in rows()]
    missing = [q for q in REQUIRED if not any(r.startswith(q) for r in requirements)]
    assert missing == []


@pytest.mark.parametrize("row", rows(), ids=lambda r: r.requirement[:50])
def test_each_row_names_faults_a_checker_and_mutants_that_exist(row: Row) -> None:
    assert row.seed and row.faults and row.checkers and row.mutants, row
    for fault in row.faults:
        kind, _, name = fault.partition(":")
        assert kind in FAULTS, f"{fault}: no such kind of fault (known: {sorted(FAULTS)})"
        assert name in FAULTS[kind](), f"{fault}: no such {kind}"
    assert set(row.checkers) <= set(CHECKERS) | {CASE_CHECKER}, row.checkers
    assert set(row.mutants) <= set(MUTANTS), row.mutants


@pytest.mark.parametrize("row", rows(), ids=lambda r: r.requirement[:50])
def test_each_mutant_of_a_row_is_caught_by_one_of_its_checkers(row: Row) -> None:
    wrong = {m: PINS[m][1] for m in row.mutants if PINS[m][1] not in row.checkers}
    assert wrong == {}, f"caught by other checkers than the row names: {wrong}"


def test_every_mutant_and_every_checker_is_named_by_some_row() -> None:
    named_mutants = {m for r in rows() for m in r.mutants}
    named_checkers = {c for r in rows() for c in r.checkers}
    assert set(MUTANTS) - named_mutants == set()
    assert set(CHECKERS) - named_checkers == set()
