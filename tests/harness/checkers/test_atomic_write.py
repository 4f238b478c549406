"""atomic_write on hand-built histories: from the files journal alone, so it judges an engine
without a history reader too; unknown only for appends at a name no expected file names."""

from __future__ import annotations

from killpoint.fake_services.journal import AppliedEffect
from killpoint.harness.checkers.atomic_write import check_atomic_write
from killpoint.harness.history import ExpectedEffectRecord, History
from killpoint.harness.results import EvidenceRef
from tests.support.histories import WORKFLOW, completed_run, effect, unreadable

REPORT = ExpectedEffectRecord(service="files", business_key="reports/r.md", operation="put")


def _file(seq: int, operation: str, key: str = "reports/r.md") -> AppliedEffect:
    return effect(seq, service="files", operation=operation, key=key, resource_id=f"etag-{seq}")


def _written(*applied: AppliedEffect) -> History:
    return unreadable(completed_run(expected=[REPORT], applied=list(applied)))


def test_a_file_written_whole_is_true() -> None:
    verdict = check_atomic_write(_written(_file(1, "put"), _file(2, "put", "drafts/d")), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "2 file write(s), each whole"


def test_a_published_file_extended_by_an_append_was_readable_torn_and_is_false() -> None:
    history = _written(_file(1, "append"), _file(2, "put", "drafts/d"), _file(3, "append"))
    verdict = check_atomic_write(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary.startswith("files [reports/r.md] was written in pieces")
    assert verdict.refs == [
        EvidenceRef(kind="effect", index=1),
        EvidenceRef(kind="effect", index=3),
    ]
    assert verdict.evidence[1].startswith("applied #3: files.append [reports/r.md]")


def test_appends_at_a_name_no_expected_file_names_are_unknown() -> None:
    history = _written(_file(1, "put"), _file(2, "put", "logs/l"), _file(3, "append", "logs/l"))
    verdict = check_atomic_write(history, WORKFLOW)
    assert verdict.valid == "unknown"
    assert "logs/l" in verdict.summary


def test_only_a_put_the_scenario_expects_declares_a_file_whole() -> None:
    """An expected append, or another service's effect under the same name, declares nothing."""
    appended = ExpectedEffectRecord(service="files", business_key="logs/l", operation="append")
    charge = ExpectedEffectRecord(service="payments", business_key="logs/l")
    history = completed_run(
        expected=[appended, charge],
        applied=[_file(1, "append", "logs/l"), _file(2, "append", "logs/l")],
    )
    assert check_atomic_write(unreadable(history), WORKFLOW).valid == "unknown"


def test_a_file_deleted_then_created_by_one_append_is_whole() -> None:
    """A delete is no write: the append after it is the file's first piece, not its second."""
    verdict = check_atomic_write(_written(_file(1, "delete"), _file(2, "append")), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "1 file write(s), each whole"


def test_a_torn_file_is_found_past_an_append_at_an_undeclared_name() -> None:
    history = _written(_file(1, "append", "logs/l"), _file(2, "append"), _file(3, "append"))
    assert check_atomic_write(history, WORKFLOW).valid is False
