"""Artifacts: content-addressed, re-hashed on read; missing or altered ones stop the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.contract import boundaries as b
from killpoint.contract.artifacts import FolderArtifacts
from killpoint.contract.clock import FakeClock
from killpoint.contract.errors import ArtifactError
from killpoint.contract.records import RunStatus
from killpoint.harness.engines.reference import StoreReader
from killpoint.harness.run.killswitch import Killed
from killpoint.reference.checkpoint import open_checkpoint
from killpoint.reference.integrity import sha256_hex
from killpoint.reference.store import Store
from tests.support.fixtures import TEST_KEY, NewWorker
from tests.support.flows import kill_at, recording

KEY = TEST_KEY.encode()
DATA = b"rendered report"


def test_folder_artifacts_are_content_addressed(tmp_path: Path) -> None:
    store = FolderArtifacts(tmp_path)
    sha, uri = store.put(DATA)
    assert (sha, uri) == (sha256_hex(DATA), f"artifact:sha256/{sha256_hex(DATA)}")
    assert store.put(DATA) == (sha, uri)
    assert store.get(sha) == DATA
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == [sha]


def test_putting_the_same_content_again_repairs_a_damaged_copy(tmp_path: Path) -> None:
    """Runs of a campaign share the folder: one run's tampering must not outlive it for the
    next run that produces the same bytes."""
    store = FolderArtifacts(tmp_path)
    sha, _ = store.put(DATA)
    store.path(sha).write_bytes(b"tampered")
    assert store.put(DATA)[0] == sha
    assert store.get(sha) == DATA


def test_a_missing_or_altered_artifact_is_never_returned(tmp_path: Path) -> None:
    store = FolderArtifacts(tmp_path)
    sha, _ = store.put(DATA)
    store.path(sha).write_bytes(b"tampered")
    with pytest.raises(ArtifactError, match="does not match its sha256"):
        store.get(sha)
    store.path(sha).unlink()
    with pytest.raises(ArtifactError, match="is missing"):
        store.get(sha)


def test_the_artifact_is_recorded_with_its_hash_in_the_checkpoint(
    new_worker: NewWorker, store: Store
) -> None:
    assert new_worker().run("artifact", "wf-1", {"slug": "x"}).status is RunStatus.COMPLETED
    cp = open_checkpoint(store.checkpoints("wf-1")[-1], KEY, "default")
    [ref] = cp.artifacts
    assert (ref.produced_by, ref.media_type, ref.sha256) == (
        "render",
        "text/plain",
        sha256_hex(b"rendered x"),
    )
    assert store.artifact("wf-1", "render") == (ref.sha256, ref.uri, "text/plain")
    assert StoreReader(store, "default").checkpoints("wf-1")[-1].outputs["use"] == len(
        b"rendered x"
    )


def test_a_recorded_artifact_is_reused_after_a_crash(
    new_worker: NewWorker, clock: FakeClock
) -> None:
    with pytest.raises(Killed):
        new_worker(hook=kill_at(clock, b.ARTIFACT_RECORDED, "render")).run(
            "artifact", "wf-1", {"slug": "x"}
        )
    clock.advance(31)
    recorder, hits = recording(clock)
    assert new_worker(hook=recorder).resume("wf-1").status is RunStatus.COMPLETED
    assert ("render", b.ARTIFACT_UPLOADED) not in {(h.step, h.boundary) for h in hits}
    assert ("render", b.STEP_BEGIN) in {(h.step, h.boundary) for h in hits}


@pytest.mark.parametrize(
    ("damage", "reason"),
    [("delete", "is missing"), ("alter", "does not match its sha256")],
)
def test_a_missing_or_mismatched_artifact_stops_the_run(
    damage: str,
    reason: str,
    new_worker: NewWorker,
    store: Store,
    clock: FakeClock,
    tmp_path: Path,
) -> None:
    with pytest.raises(Killed):
        new_worker(hook=kill_at(clock, b.CHECKPOINT_COMMITTED, "render")).run(
            "artifact", "wf-1", {"slug": "x"}
        )
    sha, _, _ = store.artifact("wf-1", "render") or ("", "", "")
    path = FolderArtifacts(tmp_path / "artifacts").path(sha)
    if damage == "delete":
        path.unlink()
    else:
        path.write_bytes(b"something else")
    clock.advance(31)

    outcome = new_worker().resume("wf-1")

    assert (outcome.status, outcome.state) == (RunStatus.NEEDS_REVIEW, "rendered")
    assert reason in outcome.reason
    cp = open_checkpoint(store.checkpoints("wf-1")[-1], KEY, "default")
    assert "use" not in StoreReader(store, "default").checkpoints("wf-1")[-1].outputs
    assert [p.kind for p in cp.pending] == ["review"]
