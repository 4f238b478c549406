"""The guide's table of services says what the code does: each service's journal operations
(what `ExpectedEffect.operation` must name) and its recovery flags, as the adapters declare
them. Its code blocks run in test_docs.py."""

from __future__ import annotations

import re

from killpoint.harness.scenario import EFFECT_OPERATIONS
from killpoint.scenarios.adapters import SERVICES
from tests.support.blocks import ROOT

GUIDE = ROOT / "docs" / "writing-a-scenario.md"


def service_rows() -> dict[str, list[str]]:
    """The table's rows by service: its cells, in the header's order."""
    lines = GUIDE.read_text(encoding="utf-8").splitlines()
    header = next(i for i, line in enumerate(lines) if "| journal operation |" in line)
    rows = {}
    for line in lines[header + 2 :]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        rows[cells[0].strip("`")] = cells
    return rows


def test_the_guide_names_every_service_with_the_operations_its_journal_records() -> None:
    rows = service_rows()
    assert set(rows) == set(EFFECT_OPERATIONS)
    shown = {service: set(re.findall(r"`(\w+)`", cells[3])) for service, cells in rows.items()}
    assert shown == {service: set(ops) for service, ops in EFFECT_OPERATIONS.items()}


def test_the_guide_gives_each_service_the_recovery_flags_of_its_adapter() -> None:
    flags = {
        service: [flag.strip() == "yes" for flag in cells[5].split(",")]
        for service, cells in service_rows().items()
    }
    assert flags == {
        name: [adapter.idempotent, adapter.queryable, adapter.irreversible]
        for name, adapter in SERVICES.items()
    }
