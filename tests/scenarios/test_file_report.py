"""A report written whole by its hash, and the draft it supersedes deleted only in the version
the run wrote: checked before (the delete names it) and after (a read finds it gone)."""

from __future__ import annotations

import pytest

from killpoint.contract.records import RunStatus
from killpoint.fake_services import FaultMode, FaultPlan, FaultRule, FilesClient
from killpoint.harness.checkers import check_all
from killpoint.harness.history import History
from killpoint.harness.run.world import World
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.file_report import SCENARIO, draft, report
from tests.scenarios.conftest import applied, client, crash, lose_response, run


def _oracle_holds(history: History) -> None:
    failed = [v for v in check_all(history, SCENARIO.workflow) if v.valid is False]
    assert failed == [], failed


def test_a_clean_run_leaves_the_report_whole_and_the_draft_gone(world: World) -> None:
    history = run(world, SCENARIO, "clean")
    assert history.final_status == RunStatus.COMPLETED, history.final_reason
    assert applied(history, "files") == ["put", "put", "delete"]
    inp = SCENARIO.make_input("clean")
    with client(world) as http:
        files = FilesClient(http)
        assert files.get(str(inp["report_key"])) == report(inp)
        assert files.get(str(inp["draft_key"])) is None
    _oracle_holds(history)


@pytest.mark.parametrize("operation", ["put", "delete"])
def test_a_lost_response_is_reconciled_by_reading_the_object(world: World, operation: str) -> None:
    history = run(world, SCENARIO, f"lost-{operation}", network=lose_response("files", operation))
    assert history.final_status == RunStatus.COMPLETED, history.final_reason
    assert applied(history, "files") == ["put", "put", "delete"]
    sent = [r.operation for r in history.requests]
    assert sent.count("delete") == 1 and sent.count("put") == 2  # found by a read, not resent
    _oracle_holds(history)


def test_a_draft_another_writer_saved_meanwhile_is_kept_and_the_run_stops_for_review(
    world: World,
) -> None:
    other = FaultRule(service="files", operation="delete", occurrence=1, mode=FaultMode.OVERWRITTEN)
    history = run(
        world,
        SCENARIO,
        "changed",
        crashes=[crash("delete_draft", "step.begin")],
        network=FaultPlan.of(other),
    )
    assert history.final_status == RunStatus.NEEDS_REVIEW
    assert history.final_state == "draft_changed"
    assert "delete" not in applied(history, "files")
    inp = SCENARIO.make_input("changed")
    with client(world) as http:
        theirs = FilesClient(http).get(str(inp["draft_key"]))
    assert theirs is not None and theirs != draft(inp)  # the other writer's version, intact
    _oracle_holds(history)


@pytest.mark.parametrize(
    "case", [c.name for s in ("file_report", "email_outbox") for c in CATALOGUE[s].cases]
)
def test_each_named_case_recovers_as_the_seed_expects(world: World, case: str) -> None:
    (scenario, named) = next((s, c) for s in CATALOGUE.values() for c in s.cases if c.name == case)
    schedule = named.schedule
    history = run(
        world, scenario, schedule.run_id, **schedule.model_dump(exclude={"scenario", "run_id"})
    )
    assert named.expect(history) is None, named.expect(history)
    failed = [v for v in check_all(history, scenario.workflow) if v.valid is False]
    assert failed == [], failed
