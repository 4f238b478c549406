"""authority on hand-built histories: the approval half from the journal and the grants, the
tamper half only where the tampering was staged and what followed it is visible."""

from __future__ import annotations

from pydantic import JsonValue

from killpoint.harness.checkers.authority import check_authority
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef
from tests.support.histories import (
    CHARGE,
    WORKFLOW,
    completed_run,
    grant,
    hit,
    lineage,
    read,
    request,
    tampering,
    unreadable,
    worker,
)

GATED = CHARGE.model_copy(update={"gate": "charge_ok"})


def _quarantined(**changes: object) -> dict[str, object]:
    """A run stopped after worker 0; checkpoint #3 was then tampered with and refused."""
    one, two, three, _ = lineage()
    refused = three.model_copy(update={"status": "untrusted", "trusted": False})
    base: dict[str, object] = {
        "checkpoints": [one, two, refused],
        "workers": [worker(0, "killed", None), worker(1, status="quarantined")],
        "requests": [request(1), read(2)],
        "final_status": "quarantined",
        "final_state": "charged",
    }
    return {**base, **changes}


def test_a_run_that_gates_and_tampers_nothing_is_true_with_or_without_a_reader() -> None:
    assert check_authority(completed_run(), WORKFLOW).valid is True
    assert check_authority(unreadable(completed_run()), WORKFLOW).valid is True


COVERED: dict[str, JsonValue] = {"amount_cents": 3000, "order_id": "order-1"}


def _gated(sent: JsonValue, covered: dict[str, JsonValue] | None = COVERED) -> History:
    """The charge gated by `charge_ok`, sent with body `sent` under a grant covering `covered`."""
    return completed_run(
        expected=[GATED],
        grants=[grant("charge_ok", 0.5, 10.0, covered)],
        requests=[request(1, sent=sent), read(2)],
    )


def test_a_gated_call_inside_its_approval_is_true() -> None:
    history = _gated({"order_id": "order-1", "amount_cents": 3000, "currency": "EUR"})
    assert check_authority(history, WORKFLOW).valid is True
    lower = _gated({"order_id": "order-1", "amount_cents": 1200})  # less than approved is inside
    assert check_authority(unreadable(lower), WORKFLOW).valid is True


def test_a_gated_call_above_its_approved_amount_is_false_citing_the_call() -> None:
    verdict = check_authority(_gated({"order_id": "order-1", "amount_cents": 6001}), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == (
        "high-impact call beyond what its approval covered: "
        "amount_cents=6001, approved 3000 ('charge_ok')"
    )
    assert verdict.refs == [EvidenceRef(kind="request", index=1)]


def test_a_gated_call_on_another_target_than_approved_is_false() -> None:
    verdict = check_authority(_gated({"order_id": "order-2", "amount_cents": 3000}), WORKFLOW)
    assert verdict.valid is False
    assert "order_id='order-2', approved 'order-1'" in verdict.summary


def test_a_gated_call_is_unknown_without_the_coverage_or_the_body() -> None:
    declared_nothing = _gated({"order_id": "order-1", "amount_cents": 6001}, covered=None)
    verdict = check_authority(declared_nothing, WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "gate 'charge_ok' declares nothing its approval covers"
    no_body = check_authority(_gated(None), WORKFLOW)
    assert no_body.valid == "unknown" and "no body to judge" in no_body.summary


def test_a_gated_call_after_its_approval_expired_is_false_citing_the_call() -> None:
    history = completed_run(expected=[GATED], grants=[grant("charge_ok", 0.0, 0.5)])
    verdict = check_authority(unreadable(history), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == (
        "high-impact call without valid authority: "
        "approval 'charge_ok' granted at t=0.0 expired at t=0.5"
    )
    assert verdict.refs == [EvidenceRef(kind="request", index=1)]
    assert verdict.evidence[1].startswith("journal #1: payments.create_charge [order-1]")


def test_a_gated_call_never_approved_is_false() -> None:
    verdict = check_authority(completed_run(expected=[GATED]), WORKFLOW)
    assert verdict.valid is False
    assert verdict.evidence[0] == "no approval 'charge_ok' granted"


def test_refusing_a_tampered_checkpoint_is_true() -> None:
    history = completed_run(**_quarantined(tampered=[tampering("flip_byte")]))
    assert check_authority(history, WORKFLOW).valid is True


def test_a_checkpoint_built_on_a_tampered_one_is_false() -> None:
    history = completed_run(tampered=[tampering("flip_byte", sequence=3)])
    verdict = check_authority(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "the run went on from a flip_byte checkpoint"
    assert verdict.refs == [EvidenceRef(kind="checkpoint", index=4)]
    assert verdict.evidence == [
        "checkpoint #3 was altered (flip_byte) after worker 0",
        "checkpoint #4 (verified) built on it",
    ]


def test_a_call_after_the_tampering_is_false_even_without_a_reader() -> None:
    history = completed_run(
        tampered=[tampering("wrong_tenant")], requests=[read(1), read(2), request(3)]
    )
    verdict = check_authority(unreadable(history), WORKFLOW)
    assert verdict.valid is False
    assert verdict.refs == [EvidenceRef(kind="request", index=3)]


def test_a_staged_tampering_whose_aftermath_is_not_visible_is_unknown() -> None:
    history = completed_run(**_quarantined(tampered=[tampering("flip_byte")]))
    verdict = check_authority(unreadable(history), WORKFLOW)
    assert verdict.valid == "unknown"
    assert "checkpoints are not visible" in verdict.summary


def test_a_tampering_the_engine_could_not_stage_is_unknown() -> None:
    history = completed_run(tampered=[tampering("legacy_unsafe", sequence=None, applied=False)])
    verdict = check_authority(history, WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "the engine under test cannot stage legacy_unsafe"


def test_a_clean_migration_is_not_authority_s_to_judge_staged_or_not() -> None:
    unstaged = tampering("legacy_v2", sequence=None, applied=False)
    assert check_authority(completed_run(tampered=[unstaged]), WORKFLOW).valid is True
    history = completed_run(tampered=[tampering("legacy_v2", sequence=3)])
    assert check_authority(history, WORKFLOW).valid is True


def test_a_step_begun_after_a_refused_tampering_is_false_even_without_a_reader() -> None:
    began = [hit("lease.acquired", 7.0, worker=1), hit("step.begin", 7.5, worker=1, step="ship")]
    history = completed_run(**_quarantined(tampered=[tampering("rollback")], hits=began))
    verdict = check_authority(unreadable(history), WORKFLOW)
    assert verdict.valid is False
    assert verdict.refs == [EvidenceRef(kind="hit", index=1)]
    assert "worker 1 went on to ship:step.begin" in verdict.evidence


def test_taking_the_lease_and_then_refusing_the_checkpoint_is_not_acting_on_it() -> None:
    history = completed_run(
        **_quarantined(
            tampered=[tampering("foreign_tenant")], hits=[hit("lease.acquired", 7.0, worker=1)]
        )
    )
    assert check_authority(history, WORKFLOW).valid is True
