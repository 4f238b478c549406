"""secrets_kept on hand-built histories: it judges the scan the harness made after the run, and
names what it found and where, never the secret's value."""

from __future__ import annotations

from killpoint.harness.canaries import CanaryFinding, CanaryScan
from killpoint.harness.checkers.secrets import check_secrets
from tests.support.histories import WORKFLOW, completed_run

NAMES = ["checkpoint_key", "service_token"]


def test_a_scan_that_found_nothing_is_true() -> None:
    verdict = check_secrets(completed_run(canaries=CanaryScan(canaries=NAMES)), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary.startswith("checkpoint_key, service_token: in none of the store")


def test_a_secret_found_is_false_with_each_place_it_lay() -> None:
    found = [
        CanaryFinding(canary="checkpoint_key", encoding="raw", where="store file store.sqlite-wal"),
        CanaryFinding(canary="service_token", encoding="base64", where="work folder notes.txt"),
    ]
    scan = CanaryScan(canaries=NAMES, findings=found)
    verdict = check_secrets(completed_run(canaries=scan), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == (
        "the engine stored the world's checkpoint_key: found in store file store.sqlite-wal"
    )
    assert verdict.evidence == [
        "checkpoint_key (raw) in store file store.sqlite-wal",
        "service_token (base64) in work folder notes.txt",
    ]


def test_a_run_that_was_not_scanned_is_unknown_not_true() -> None:
    verdict = check_secrets(completed_run(), WORKFLOW)
    assert verdict.valid == "unknown"
    assert "not scanned" in verdict.summary


def test_a_store_that_could_not_be_read_is_unknown() -> None:
    scan = CanaryScan(canaries=NAMES, unscanned=["the store's rows: connection refused"])
    verdict = check_secrets(completed_run(canaries=scan), WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "could not scan the store's rows: connection refused"


def test_a_finding_beats_a_place_that_could_not_be_read() -> None:
    found = [CanaryFinding(canary="service_token", encoding="hex", where="history")]
    scan = CanaryScan(canaries=NAMES, findings=found, unscanned=["the store's rows: refused"])
    assert check_secrets(completed_run(canaries=scan), WORKFLOW).valid is False
