"""expected_outcome on hand-built histories: the status a run ended with against the scenario's,
and the faults that may explain a safe stop instead."""

from __future__ import annotations

import pytest
from pydantic import JsonValue

from killpoint.contract.boundaries import HANDOFF_ACCEPTED, HANDOFF_SENT
from killpoint.contract.records import EffectStatus
from killpoint.fake_services.faults import FaultMode, FaultPlan, FaultRule
from killpoint.harness.checkers.outcome import check_outcome
from killpoint.harness.history import ExpectedEffectRecord, History
from killpoint.harness.run.world import BASE_VERSIONS
from killpoint.harness.schedule import Deploy, HitPoint
from tests.support.histories import (
    LIMITS,
    WORKFLOW,
    checkpoint,
    completed_run,
    hit,
    ledger_row,
    read,
    request,
    schedule,
    tampering,
    unreadable,
    worker,
)

CRASH = HitPoint(worker=0, step="charge", boundary="effect.started")
MAIL = ExpectedEffectRecord(
    service="mailer", business_key="msg-1", irreversible=True, verifiable=False
)
SENT = request(1, "send", service="mailer", key="msg-1", idempotency_key=None)
MAIL_ROW = ledger_row(
    key="kp-mail", service="mailer", args={"to": "a@b.test"}, status=EffectStatus.NEEDS_REVIEW
)


def _ended(status: str, **changes: object) -> History:
    """The good run, disturbed by a crash, ending `status` where the scenario expects
    completion."""
    fields: dict[str, object] = {
        "schedule": schedule(crashes=[CRASH]),
        "workers": [worker(0, "killed", None), worker(1, status=status)],
        "final_status": status,
        "final_state": "order_validated",
        **changes,
    }
    return completed_run(**fields)


def test_the_expected_status_is_true() -> None:
    verdict = check_outcome(completed_run(), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "completed, as expected"


def test_a_saga_that_ends_failed_under_a_crash_is_false() -> None:
    history = _ended("failed", expected_status="compensated", final_reason="refund rejected")
    verdict = check_outcome(history, WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == (
        "ended failed, expected compensated, and nothing in the history explains it"
    )
    assert verdict.evidence[0] == "final: failed in order_validated: refund rejected"


def test_giving_up_on_an_effect_the_service_can_be_asked_about_is_false() -> None:
    history = _ended("needs_review", requests=[], applied=[], effects=[ledger_row(1)])
    assert check_outcome(history, WORKFLOW).valid is False


def test_review_for_an_unreadable_effect_attempted_under_a_crash_is_true() -> None:
    history = _ended("needs_review", expected=[MAIL], requests=[SENT], effects=[])
    verdict = check_outcome(history, WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary.startswith("needs_review, not completed: mailer [msg-1] was attempted")


def test_an_attempt_spent_and_never_delivered_is_in_doubt_too() -> None:
    history = _ended("needs_review", expected=[MAIL], requests=[], effects=[MAIL_ROW])
    assert check_outcome(history, WORKFLOW).valid is True


def test_review_for_an_unreadable_effect_never_attempted_is_false() -> None:
    never = MAIL_ROW.model_copy(update={"attempts": 0})
    history = _ended("needs_review", expected=[MAIL], requests=[], effects=[never])
    assert check_outcome(history, WORKFLOW).valid is False


def test_whether_it_was_attempted_is_unknown_without_a_reader() -> None:
    history = unreadable(_ended("needs_review", expected=[MAIL], requests=[]))
    verdict = check_outcome(history, WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "whether mailer was attempted is not visible without a reader"


def test_review_without_any_fault_that_could_hide_an_outcome_is_false() -> None:
    quiet = completed_run(
        expected=[MAIL], requests=[SENT], final_status="needs_review", final_state="received"
    )
    assert check_outcome(quiet, WORKFLOW).valid is False


def test_quarantine_after_a_tampering_the_loader_must_refuse_is_true() -> None:
    history = _ended("quarantined", tampered=[tampering("flip_byte")])
    assert check_outcome(history, WORKFLOW).valid is True
    history = _ended("quarantined", tampered=[tampering("legacy_v2")])
    assert check_outcome(history, WORKFLOW).valid is False


def test_quarantine_after_a_deploy_is_true_and_after_nothing_is_false() -> None:
    deployed = schedule(crashes=[CRASH], deploys=[Deploy(from_worker=1, versions=BASE_VERSIONS)])
    assert check_outcome(_ended("quarantined", schedule=deployed), WORKFLOW).valid is True
    assert check_outcome(_ended("quarantined"), WORKFLOW).valid is False


def test_a_tampering_of_a_kind_it_does_not_know_is_unknown() -> None:
    history = _ended("quarantined", tampered=[tampering("rolled_back")])
    verdict = check_outcome(history, WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "a tampering of kind rolled_back may change the outcome"


def test_review_when_every_read_after_a_withheld_effect_failed_is_true() -> None:
    withheld = FaultRule(
        service="payments", operation="create_charge", mode=FaultMode.ERROR_AFTER_COMMIT
    )
    reads = [read(seq, outcome="not_visible") for seq in (2, 3)]
    history = _ended(
        "needs_review",
        schedule=schedule(network=FaultPlan.of(withheld)),
        requests=[request(1), *reads],
    )
    verdict = check_outcome(history, WORKFLOW)
    assert verdict.valid is True
    assert (
        verdict.summary
        == "needs_review, not completed: 2 read(s) of payments [order-1] never saw it"
    )
    seen = _ended(
        "needs_review",
        schedule=schedule(network=FaultPlan.of(withheld)),
        requests=[request(1), read(2, outcome="not_visible"), read(3)],
    )
    assert check_outcome(seen, WORKFLOW).valid is False


def test_review_after_an_artifact_was_damaged_is_true() -> None:
    history = _ended("needs_review", tampered=[tampering("artifact_corrupt")])
    assert check_outcome(history, WORKFLOW).valid is True


def test_review_after_a_delete_refused_for_another_writers_version_is_true() -> None:
    other = FaultRule(service="files", operation="delete", occurrence=1, mode="overwritten")
    refused = request(3, "delete", service="files", key="drafts/d.md", outcome="rejected")
    faulted = schedule(crashes=[CRASH], network=FaultPlan.of(other))
    history = _ended("needs_review", schedule=faulted, requests=[request(1), read(2), refused])
    verdict = check_outcome(history, WORKFLOW)
    assert verdict.valid is True
    assert "another writer" in verdict.summary
    unsent = _ended("needs_review", schedule=faulted)  # the delete never sent: no excuse
    assert check_outcome(unsent, WORKFLOW).valid is False


def test_review_after_a_handoff_sent_and_never_accepted_is_true() -> None:
    history = _ended("needs_review", hits=[hit(HANDOFF_SENT, 1.0, step="write_contract")])
    assert check_outcome(history, WORKFLOW).valid is True


def _accepted(deadline: float, *, terms: bool = True) -> History:
    """Accepted at t=1 with `deadline` in its terms; the resumed worker stops for review at
    t=15 (see `worker`)."""
    outputs: dict[str, JsonValue] = {"accept_contract": {"deadline": deadline, "accepted": True}}
    return _ended(
        "needs_review",
        hits=[hit(HANDOFF_ACCEPTED, 1.0, step="accept_contract")],
        checkpoints=[
            checkpoint(1, "received"),
            checkpoint(2, "a", outputs=outputs if terms else {}),
        ],
    )


def test_review_after_an_accepted_handoff_expired_is_true_and_before_it_is_false() -> None:
    assert check_outcome(_accepted(12.0), WORKFLOW).valid is True
    assert check_outcome(_accepted(100.0), WORKFLOW).valid is False


def test_review_after_an_acceptance_whose_terms_are_not_visible_is_unknown() -> None:
    verdict = check_outcome(_accepted(12.0, terms=False), WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "the accepted handoff's deadline is not visible"


def test_an_exhausted_budget_is_true_only_when_it_really_ran_out() -> None:
    spent = _ended("budget_exhausted", effects=[ledger_row(3)])
    assert check_outcome(spent, WORKFLOW).valid is True
    left = _ended("budget_exhausted", effects=[ledger_row(1)])
    assert check_outcome(left, WORKFLOW).valid is False
    assert check_outcome(unreadable(left), WORKFLOW).valid == "unknown"


def test_a_checkpoint_with_no_steps_or_no_cost_left_explains_an_exhausted_budget() -> None:
    """Either budget at zero ran the run out; one step left, or none counted, did not."""

    def judged(budget: dict[str, JsonValue] | None) -> object:
        history = _ended("budget_exhausted", checkpoints=[checkpoint(1, "received", budget=budget)])
        return check_outcome(history, WORKFLOW).valid

    assert judged({"steps_left": 0}) is True
    assert judged({"steps_left": 1, "cost_left": 0}) is True
    assert judged({"steps_left": 1, "cost_left": 1}) is False
    assert judged(None) is False


def test_a_run_that_no_worker_took_has_spent_no_time() -> None:
    """A second's limit and no worker: the clock ran nothing down."""
    history = _ended("budget_exhausted", workers=[], limits=LIMITS.model_copy(update={"time_s": 1}))
    assert check_outcome(history, WORKFLOW).valid is False


def test_the_time_spent_runs_from_the_first_workers_start_to_the_last_ones_end() -> None:
    """Workers from t=10 to t=25: 15s spent, within a 20s limit."""
    late = [worker(1, "killed", None), worker(2, status="budget_exhausted")]
    limits = LIMITS.model_copy(update={"time_s": 20})
    history = _ended("budget_exhausted", workers=late, limits=limits)
    assert check_outcome(history, WORKFLOW).valid is False
    assert (
        check_outcome(
            history.model_copy(update={"limits": LIMITS.model_copy(update={"time_s": 15})}),
            WORKFLOW,
        ).valid
        is True
    )


def test_a_run_that_did_not_end_is_left_to_progress() -> None:
    verdict = check_outcome(_ended("running"), WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "the run did not end (running): progress judges it"


def test_a_dead_letter_after_redeliveries_is_true_and_without_any_is_false() -> None:
    redelivered = _ended("dead_lettered", final_reason="dead-lettered: delivered 21 times")
    assert check_outcome(redelivered, WORKFLOW).valid is True
    once = completed_run(final_status="dead_lettered", workers=[worker(0, status="dead_lettered")])
    assert check_outcome(once, WORKFLOW).valid is False


@pytest.mark.parametrize(
    ("final", "control"), [("compensated", "compensate"), ("failed", "terminate")]
)
def test_an_end_the_case_s_operator_chose_is_explained_and_a_refused_control_explains_nothing(
    final: str, control: str
) -> None:
    applied = check_outcome(_ended(final, controls=[f"{control}: {final}"]), WORKFLOW)
    assert applied.valid is True and f"the case's operator applied {control}" in applied.summary
    for controls in ([], [f"{control} refused: the rules forbid it"], ["reconcile: running"]):
        assert check_outcome(_ended(final, controls=controls), WORKFLOW).valid is False


def test_without_a_reader_the_expected_end_is_the_worker_s_word_only() -> None:
    """Never true on a worker's word: its end as expected is unknown without a reader."""
    verdict = check_outcome(unreadable(completed_run()), WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "its workers say: completed, as expected; no durable record shows it"
    unexplained = unreadable(_ended("failed", final_reason="gave up"))
    assert check_outcome(unexplained, WORKFLOW).valid is False  # what it said is held against it
