from __future__ import annotations

import hashlib

import httpx
import pytest

from killpoint.fake_services import FilesClient, InProcessServices, NotFound, Rejected
from tests.support.service_faults import plan, rule


@pytest.fixture
def files(http: httpx.Client) -> FilesClient:
    return FilesClient(http)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_put_stores_the_object_whole_and_its_effect_names_the_object_it_left(
    services: InProcessServices, files: FilesClient
) -> None:
    stored = files.put("reports/a.json", b"report", if_none_match=True)
    assert (stored.etag, stored.size) == (_sha(b"report"), 6)
    assert files.get("reports/a.json") == b"report"
    (effect,) = services.journal.applied_effects("files")
    assert (effect.operation, effect.business_key) == ("put", "reports/a.json")
    assert effect.resource_id == effect.fingerprint == _sha(b"report")


def test_a_body_that_does_not_match_its_checksum_is_refused_and_nothing_stored(
    services: InProcessServices, http: httpx.Client
) -> None:
    sent = http.put("/files/a.json", content=b"report", headers={"x-amz-checksum-sha256": "AA=="})
    assert (sent.status_code, sent.json()["error"]) == (400, "BadDigest")
    assert http.get("/files/a.json").status_code == 404
    assert services.journal.applied_effects("files") == []


def test_a_conditional_create_never_replaces_an_object(files: FilesClient) -> None:
    files.put("a.json", b"first", if_none_match=True)
    with pytest.raises(Rejected) as refused:
        files.put("a.json", b"second", if_none_match=True)
    assert refused.value.status == 412
    assert files.get("a.json") == b"first"


def test_a_conditional_replace_replaces_only_the_version_it_names(files: FilesClient) -> None:
    files.put("a.json", b"first")
    with pytest.raises(Rejected) as refused:
        files.put("a.json", b"second", if_match=_sha(b"other"))
    assert refused.value.status == 412
    files.put("a.json", b"second", if_match=_sha(b"first"))
    assert files.get("a.json") == b"second"
    with pytest.raises(NotFound):
        files.put("missing.json", b"x", if_match=_sha(b"first"))


def test_appends_leave_the_object_readable_partly_written_in_between(
    services: InProcessServices, files: FilesClient
) -> None:
    files.append("log.txt", 0, b"head ")
    assert files.get("log.txt") == b"head "  # a reader sees the torn object
    with pytest.raises(Rejected) as refused:
        files.append("log.txt", 3, b"body")
    assert refused.value.status == 400
    files.append("log.txt", 5, b"body")
    assert files.get("log.txt") == b"head body"
    grown = services.journal.applied_effects("files")[-1]
    assert grown.operation == "append"
    assert grown.resource_id == _sha(b"head body") != grown.fingerprint


def test_a_delete_answers_204_whether_or_not_anything_was_there(
    services: InProcessServices, http: httpx.Client, files: FilesClient
) -> None:
    files.put("a.json", b"first")
    assert http.delete("/files/a.json").status_code == 204
    assert http.delete("/files/a.json").status_code == 204
    assert files.get("a.json") is None
    deletes = [e for e in services.journal.applied_effects("files") if e.operation == "delete"]
    assert [e.resource_id for e in deletes] == [_sha(b"first")]  # the version it removed


def test_a_conditional_delete_removes_only_the_version_it_names(files: FilesClient) -> None:
    files.put("a.json", b"first")
    with pytest.raises(Rejected) as refused:
        files.delete("a.json", if_match=_sha(b"other"))
    assert refused.value.status == 412
    assert files.get("a.json") == b"first"
    files.delete("a.json", if_match=_sha(b"first"))
    with pytest.raises(NotFound):
        files.delete("a.json", if_match=_sha(b"first"))


def test_overwritten_another_writer_saves_first_unjournaled(
    services: InProcessServices, files: FilesClient
) -> None:
    files.put("draft.json", b"mine")
    services.set_plan(plan(rule("files", "delete", "overwritten")))
    with pytest.raises(Rejected) as refused:
        files.delete("draft.json", if_match=_sha(b"mine"))
    assert refused.value.status == 412
    theirs = files.get("draft.json")
    assert theirs is not None and theirs != b"mine"
    assert [e.operation for e in services.journal.applied_effects("files")] == ["put"]
    files.delete("draft.json")  # an unconditional delete takes the other writer's version
    removed = services.journal.applied_effects("files")[-1]
    assert removed.resource_id == _sha(theirs)


def test_overwritten_applies_to_deletes_only() -> None:
    with pytest.raises(ValueError, match="overwritten"):
        plan(rule("files", "get", "overwritten"))
