"""monotonic_sequence on hand-built lineages: true, false with the two checkpoints that prove
it, unknown when the lineage is not visible."""

from __future__ import annotations

from dataclasses import replace

import pytest

from killpoint.contract.workflow import Workflow
from killpoint.harness.checkers.sequence import check_sequence
from killpoint.harness.protocol import AuditedControl, CheckpointRecord
from killpoint.harness.results import EvidenceRef, Verdict
from killpoint.scenarios import CATALOGUE
from tests.support.histories import (
    WORKFLOW,
    checkpoint,
    completed_run,
    lineage,
    schedule,
    unreadable,
)


def test_a_gapless_lineage_of_legal_transitions_is_true() -> None:
    verdict = check_sequence(completed_run(), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "#1..#4, every transition legal"


def test_a_restart_into_a_new_run_that_descends_from_the_old_is_legal() -> None:
    restarted = checkpoint(4, "received", run_id="run-2", parent_run_id="run-1", decision="restart")
    verdict = check_sequence(completed_run(checkpoints=[*lineage()[:3], restarted]), WORKFLOW)
    assert verdict.valid is True


def _two_cited(cps: list[CheckpointRecord], a: int, b: int) -> tuple[str, list[EvidenceRef]]:
    verdict = check_sequence(completed_run(checkpoints=cps), WORKFLOW)
    assert verdict.valid is False
    assert verdict.refs == [
        EvidenceRef(kind="checkpoint", index=a),
        EvidenceRef(kind="checkpoint", index=b),
    ]
    assert [line.split(":")[0] for line in verdict.evidence] == [
        f"checkpoint #{a}",
        f"checkpoint #{b}",
    ]
    return verdict.summary, verdict.refs


def test_a_gap_in_the_lineage_is_false_citing_both_sides() -> None:
    one, two, _, four = lineage()
    summary, _ = _two_cited([one, two, four], 2, 4)
    assert summary == "gap between #2 and #4"


def test_a_sequence_committed_twice_is_false() -> None:
    one, two, three, _ = lineage()
    again = checkpoint(3, "charged", run_id="run-1", created_at=3.5)
    summary, _ = _two_cited([one, two, three, again], 3, 3)
    assert summary == "checkpoint #3 committed twice"


def test_a_checkpoint_under_an_older_fencing_token_is_a_fork() -> None:
    one, two, three, _ = lineage()
    newer = three.model_copy(update={"fencing_token": 2})
    stale = checkpoint(4, "verified", status="completed", fencing_token=1)
    summary, _ = _two_cited([one, two, newer, stale], 3, 4)
    assert summary.startswith("fork: #4 was written under an older fencing token than #3")


def test_a_step_the_workflow_does_not_have_is_an_illegal_transition() -> None:
    one, *_ = lineage()
    skipped = checkpoint(2, "charged")  # received → charged skips validate_order
    summary, _ = _two_cited([one, skipped], 1, 2)
    assert summary == "illegal transition received → charged"


def test_a_lineage_that_does_not_start_at_one_is_false() -> None:
    verdict = check_sequence(completed_run(checkpoints=lineage()[1:]), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "lineage starts at #2, not #1"
    assert verdict.refs == [EvidenceRef(kind="checkpoint", index=2)]


def test_a_compacted_lineage_starts_where_compaction_stopped() -> None:
    verdict = check_sequence(completed_run(checkpoints=lineage()[2:], compacted_below=3), WORKFLOW)
    assert verdict.valid is True


def test_an_engine_without_a_history_reader_is_unknown_not_true() -> None:
    verdict = check_sequence(unreadable(completed_run()), WORKFLOW)
    assert verdict.valid == "unknown"
    assert "no history reader" in verdict.summary


@pytest.mark.parametrize("final_status", ["completed", "absent"])
def test_a_reader_that_shows_no_checkpoint_is_unknown(final_status: str) -> None:
    verdict = check_sequence(completed_run(checkpoints=[], final_status=final_status), WORKFLOW)
    assert verdict.valid == "unknown"
    assert "no checkpoint" in verdict.summary


# -- a person's controls (seed 000): moves no step makes, legal only as the operator's ----------

SAGA = CATALOGUE["order_saga"].workflow  # shipment_rejected → refund is its compensation
REFUND = CATALOGUE["approval_refund"].workflow  # refund_requested is its approval gate's state


def _moved(workflow: Workflow, b_state: str, b_status: str, controls: list[str]) -> Verdict:
    """From a state no step of `workflow` leads to `b_state` from (charged, refunded)."""
    start = checkpoint(1, "charged" if workflow is SAGA else "refunded")
    moved = checkpoint(2, b_state, status=b_status)
    return check_sequence(completed_run(checkpoints=[start, moved], controls=controls), workflow)


@pytest.mark.parametrize(
    ("workflow", "state", "status", "control"),
    [
        (SAGA, "shipment_rejected", "running", "compensate: running"),
        (REFUND, "refund_requested", "waiting_approval", "request-approval: waiting_approval"),
    ],
)
def test_a_move_the_operator_s_control_made_is_legal_and_the_same_move_without_it_is_not(
    workflow: Workflow, state: str, status: str, control: str
) -> None:
    assert _moved(workflow, state, status, [control]).valid is True
    name = control.partition(":")[0]
    for controls in ([], [f"{name} refused: the rules forbid it"], ["reconcile: running"]):
        verdict = _moved(workflow, state, status, controls)
        assert verdict.valid is False and verdict.summary.startswith("illegal transition")


def test_one_control_excuses_one_move_and_only_to_where_it_leads() -> None:
    compensated = [checkpoint(1, "charged"), checkpoint(2, "shipment_rejected")]
    once = completed_run(checkpoints=compensated, controls=["compensate: running"])
    assert check_sequence(once, SAGA).valid is True
    twice = [*compensated, checkpoint(3, "charged"), checkpoint(4, "shipment_rejected")]
    history = completed_run(checkpoints=twice, controls=["compensate: running"])
    verdict = check_sequence(history, SAGA)  # shipment_rejected → charged: no control made it
    assert verdict.valid is False and verdict.refs[0].index == 2
    # a control that completes a run with an effect in doubt is still an illegal jump
    jumped = [checkpoint(1, "charged"), checkpoint(2, "delivered", status="completed")]
    history = completed_run(checkpoints=jumped, controls=["compensate: completed"])
    assert check_sequence(history, SAGA).valid is False


def test_a_control_whose_worker_died_in_it_or_after_its_commit_still_made_its_move() -> None:
    """In flight when its worker died, or held by the audit trail only: the move is the
    control's; neither excuses a move the schedule's operator never asked for."""
    moved = [checkpoint(1, "charged"), checkpoint(2, "shipment_rejected")]
    in_flight = completed_run(checkpoints=moved, controls=["compensate: in flight"])
    assert check_sequence(in_flight, SAGA).valid is True
    row = AuditedControl(
        control="compensate",
        actor="killpoint-operator",
        at=2.0,
        from_sequence=1,
        to_sequence=2,
        to_status="running",
    )
    asked = schedule(controls=["compensate"])
    audited = completed_run(checkpoints=moved, schedule=asked, audit=[row])
    assert audited.controls_applied == ["compensate"]
    assert check_sequence(audited, SAGA).valid is True
    unasked = completed_run(checkpoints=moved, audit=[row])  # the schedule named no control
    assert check_sequence(unasked, SAGA).valid is False


# -- the mutation score's survivors (issue 26, point 7) -------------------------------------


def test_evidence_cites_each_checkpoint_whole_with_its_fencing_token_when_it_has_one() -> None:
    """The citation is what a reader checks the verdict against: token shown only if known."""
    one, *_ = lineage()
    unfenced = checkpoint(2, "charged", fencing_token=None)
    verdict = check_sequence(completed_run(checkpoints=[one, unfenced]), WORKFLOW)
    assert verdict.evidence == [
        "checkpoint #1: received (running) run=run-1 token=1 at t=1.0",
        "checkpoint #2: charged (running) run=run-1 at t=2.0",
    ]


def test_a_lineage_that_starts_late_cites_its_first_checkpoint() -> None:
    verdict = check_sequence(completed_run(checkpoints=lineage()[1:]), WORKFLOW)
    assert verdict.evidence == [
        "checkpoint #2: order_validated (running) run=run-1 token=1 at t=2.0"
    ]


def test_checkpoints_committed_at_the_same_instant_are_not_a_rewritten_history() -> None:
    one, two, three, four = lineage()
    same = two.model_copy(update={"created_at": one.created_at})
    assert check_sequence(completed_run(checkpoints=[one, same, three, four]), WORKFLOW).valid


def test_a_checkpoint_older_than_its_predecessor_is_a_rewritten_history() -> None:
    one, two, three, four = lineage()
    older = three.model_copy(update={"created_at": 0.5})
    summary, _ = _two_cited([one, two, older, four], 2, 3)
    assert summary == "#3 is older than #2: history was rewritten"


def test_a_legal_step_into_a_run_that_does_not_descend_is_a_fork() -> None:
    one, two, three, _ = lineage()
    foreign = checkpoint(4, "verified", status="completed", run_id="run-9")
    summary, _ = _two_cited([one, two, three, foreign], 3, 4)
    assert summary == "fork: #4 belongs to run run-9, which does not descend from run-1"


def test_a_new_run_descends_only_by_a_lineage_decision_naming_the_old_run_as_parent() -> None:
    one, two, three, _ = lineage()
    for decision, parent in (("branch", "run-0"), (None, "run-1")):
        stray = checkpoint(
            4,
            "verified",
            status="completed",
            run_id="run-2",
            decision=decision,
            parent_run_id=parent,
        )
        summary, _ = _two_cited([one, two, three, stray], 3, 4)
        assert summary.startswith("fork: #4 belongs to run run-2")


def test_an_untrusted_checkpoint_claims_no_run_and_no_transition() -> None:
    """A row that failed its integrity check shows only itself: its lineage claim and its
    state are not the engine's word, so neither a fork nor an illegal step is proven by it."""
    one, two, three, _ = lineage()
    odd = checkpoint(4, "received", run_id="run-9", trusted=False)
    assert check_sequence(completed_run(checkpoints=[one, two, three, odd]), WORKFLOW).valid
    unsure = odd.model_copy(update={"run_id": "run-1"})
    after = checkpoint(5, "charged")  # received → charged, from a row nobody vouches for
    history = completed_run(checkpoints=[one, two, three, unsure, after])
    assert check_sequence(history, WORKFLOW).valid is True


def test_a_restart_is_legal_only_into_the_initial_state_of_a_new_run() -> None:
    one, two, three, _ = lineage()
    in_place = checkpoint(4, "received", decision="restart")  # same run: no restart
    assert (
        _two_cited([one, two, three, in_place], 3, 4)[0] == "illegal transition charged → received"
    )
    mid = checkpoint(
        4, "order_validated", run_id="run-2", parent_run_id="run-1", decision="restart"
    )
    summary, _ = _two_cited([one, two, three, mid], 3, 4)
    assert summary == "illegal transition charged → order_validated"
    branched = checkpoint(4, "received", run_id="run-2", parent_run_id="run-1", decision="branch")
    summary, _ = _two_cited([one, two, three, branched], 3, 4)
    assert summary == "illegal transition charged → received"


def test_no_step_leads_out_of_a_terminal_state() -> None:
    after_end = checkpoint(5, "received")
    history = completed_run(checkpoints=[*lineage(), after_end])
    verdict = check_sequence(history, WORKFLOW)
    assert verdict.valid is False and verdict.summary == "illegal transition verified → received"


def test_a_gated_step_may_send_its_run_back_to_the_gate_s_approval() -> None:
    """A grant that lapsed before the refund: the run waits at the gate again."""
    back = [checkpoint(1, "approved"), checkpoint(2, "refund_requested")]
    assert check_sequence(completed_run(checkpoints=back), REFUND).valid is True
    elsewhere = [checkpoint(1, "approved"), checkpoint(2, "charged")]
    assert check_sequence(completed_run(checkpoints=elsewhere), REFUND).valid is False


def test_a_gate_no_approval_step_opens_sends_a_run_nowhere() -> None:
    first, charge, *rest = WORKFLOW.transitions
    gated = replace(charge, step=replace(charge.step, gate="nobody"))
    workflow = replace(WORKFLOW, transitions=(first, gated, *rest))
    back = [checkpoint(1, "order_validated"), checkpoint(2, "received")]
    verdict = check_sequence(completed_run(checkpoints=back), workflow)
    assert verdict.valid is False and verdict.summary.startswith("illegal transition")


def test_request_approval_leads_only_to_an_approval_s_state_waiting_for_it() -> None:
    controls = ["request-approval: waiting_approval"]
    for state, status in (("charged", "waiting_approval"), ("refund_requested", "running")):
        verdict = _moved(REFUND, state, status, controls)
        assert verdict.valid is False and verdict.summary.startswith("illegal transition")


def test_each_control_excuses_exactly_one_move() -> None:
    """Compensated, refunded, compensated again: the second jump needs a second control."""
    states = ("charged", "shipment_rejected", "refunded", "shipment_rejected")
    cps = [checkpoint(n, s) for n, s in enumerate(states, start=1)]
    twice = completed_run(checkpoints=cps, controls=["compensate: running"] * 2)
    assert check_sequence(twice, SAGA).valid is True
    once = completed_run(checkpoints=cps, controls=["compensate: running"])
    verdict = check_sequence(once, SAGA)
    assert verdict.valid is False and verdict.refs[0].index == 3
