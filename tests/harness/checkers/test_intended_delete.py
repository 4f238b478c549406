"""intended_delete on hand-built histories: from the files journal alone, which holds every
write the world saw but another writer's, so it is never unknown."""

from __future__ import annotations

from killpoint.fake_services.journal import AppliedEffect
from killpoint.harness.checkers.intended_delete import check_intended_delete
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef
from tests.support.histories import WORKFLOW, completed_run, effect, unreadable


def _file(seq: int, operation: str, version: str, key: str = "drafts/d.md") -> AppliedEffect:
    return effect(seq, service="files", operation=operation, key=key, resource_id=version)


def _run(*applied: AppliedEffect) -> History:
    return unreadable(completed_run(applied=[effect(1), *applied]))


def test_deleting_the_version_the_run_wrote_is_true() -> None:
    history = _run(_file(2, "put", "v1"), _file(3, "put", "v2"), _file(4, "delete", "v1"))
    verdict = check_intended_delete(history, WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "1 delete(s), each of a version this run wrote"


def test_deleting_a_version_another_writer_saved_meanwhile_is_false() -> None:
    history = _run(_file(2, "put", "v1"), _file(3, "delete", "theirs"))
    verdict = check_intended_delete(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary.startswith("files.delete [drafts/d.md] removed version theirs…")
    assert verdict.refs == [EvidenceRef(kind="effect", index=3)]
    assert verdict.evidence[1] == "this run wrote [drafts/d.md] as: v1…"


def test_a_version_written_only_after_the_delete_does_not_excuse_it() -> None:
    history = _run(_file(2, "delete", "v1"), _file(3, "put", "v1"))
    assert check_intended_delete(history, WORKFLOW).valid is False


def test_a_run_without_deletes_is_true_and_never_unknown() -> None:
    verdict = check_intended_delete(_run(_file(2, "put", "v1")), WORKFLOW)
    assert verdict.valid is True


def test_long_versions_are_cited_by_their_first_twelve_characters() -> None:
    """An ETag is long; the verdict cites enough of it to find it (issue 26, point 7)."""
    history = _run(_file(2, "put", "0123456789abcdef"), _file(3, "delete", "fedcba9876543210"))
    verdict = check_intended_delete(history, WORKFLOW)
    assert verdict.summary.startswith("files.delete [drafts/d.md] removed version fedcba987654…,")
    assert verdict.evidence[1] == "this run wrote [drafts/d.md] as: 0123456789ab…"
