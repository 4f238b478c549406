"""isolation on hand-built histories: a run beside a second tenant's run of the same order, each
half of the checker made false by the one record that crosses over, unknown where the records
it needs are missing, true when nothing crosses."""

from __future__ import annotations

from pydantic import JsonValue

from killpoint.contract.records import ApprovalRecord, EffectRecord, EffectStatus, Receipt
from killpoint.fake_services.journal import AppliedEffect
from killpoint.harness.checkers._common import cite_effect
from killpoint.harness.checkers.isolation import check_isolation
from killpoint.harness.history import ExpectedEffectRecord, FailureRecord, History
from killpoint.harness.protocol import ANY_WORKFLOW, CheckpointRecord
from killpoint.harness.results import EvidenceRef
from tests.support.histories import (
    CHARGE,
    MAIN,
    NEIGHBOUR,
    WORKFLOW,
    checkpoint,
    completed_run,
    effect,
    ledger_row,
    lineage,
    neighbour,
    request,
    shared_world,
    signed,
)

TENANT_B_APPROVER = "operator+tenant-b@example.test"


def _granted(actor: str, workflow_id: str) -> ApprovalRecord:
    return ApprovalRecord(
        workflow_id=workflow_id, gate="charge_ok", status="granted", actor=actor, expires_at=99.0
    )


def test_a_run_alone_shares_its_world_with_nobody() -> None:
    verdict = check_isolation(completed_run(), WORKFLOW)
    assert verdict.valid is True and "no neighbour" in verdict.summary


def test_a_neighbour_with_keys_resources_and_approvals_of_its_own_is_true() -> None:
    approved = neighbour(approvals=[_granted(TENANT_B_APPROVER, "tiny_order:2")])
    verdict = check_isolation(shared_world(neighbours=[approved]), WORKFLOW)
    assert verdict.valid is True, verdict


def test_a_request_under_a_neighbours_idempotency_key_is_false() -> None:
    """The second tenant's identical order sent under the run's key: the service replays the
    run's charge to it."""
    copied = signed(request(5, idempotency_key="order-1/create_charge"), NEIGHBOUR)
    verdict = check_isolation(shared_world(neighbours=[neighbour(requests=[copied])]), WORKFLOW)
    assert verdict.valid is False
    assert "idempotency key" in verdict.summary and "the run" in verdict.evidence[0]
    assert verdict.refs == [EvidenceRef(kind="request", index=1)]  # the run's own, cited


def test_a_receipt_naming_a_resource_a_neighbour_created_is_false() -> None:
    """The run's ledger holds the charge the second tenant's request made (a lookup by the
    order id found it); its own request never applied one."""
    theirs = ledger_row(key="order-1/create_charge", receipt=None).model_copy(
        update={"receipt": Receipt(resource_id="ch_9")}
    )
    history = shared_world(effects=[theirs], applied=[])
    verdict = check_isolation(history, WORKFLOW)
    assert verdict.valid is False
    assert "ch_9" in verdict.summary and "created" in verdict.summary


def test_an_approval_another_tenants_approver_gave_is_false() -> None:
    one, two, three, four = lineage()
    carried = [{"gate": "charge_ok", "actor": TENANT_B_APPROVER, "expires_at": 99.0}]
    history = shared_world(
        checkpoints=[one, two, three.model_copy(update={"approvals": carried}), four],
        approvals=[],
        neighbours=[neighbour(approvals=[_granted(TENANT_B_APPROVER, "tiny_order:2")])],
    )
    verdict = check_isolation(history, WORKFLOW)
    assert verdict.valid is False
    assert TENANT_B_APPROVER in verdict.summary
    assert verdict.refs == [EvidenceRef(kind="checkpoint", index=3)]


def test_the_runs_own_approval_at_the_same_gate_is_true() -> None:
    one, two, three, four = lineage()
    carried = [{"gate": "charge_ok", "actor": "operator@example.test", "expires_at": 50.0}]
    history = shared_world(
        checkpoints=[one, two, three.model_copy(update={"approvals": carried}), four],
        approvals=[_granted("operator@example.test", "tiny_order:1")],
        neighbours=[neighbour(approvals=[_granted(TENANT_B_APPROVER, "tiny_order:2")])],
    )
    assert check_isolation(history, WORKFLOW).valid is True


def _charged_only_by_the_neighbour() -> tuple[list[AppliedEffect], History]:
    """Two charges of order-1 in the journal, both the second tenant's; the run has none."""
    twice = [
        signed(effect(5, idempotency_key="b/charge", resource_id="ch_9"), NEIGHBOUR),
        signed(effect(6, idempotency_key="b/charge-2", resource_id="ch_10"), NEIGHBOUR),
    ]
    return twice, shared_world(
        applied=[], effects=[], neighbours=[neighbour(applied=twice, effects=[])]
    )


def test_completed_with_its_charge_applied_only_under_a_neighbours_origin_is_false() -> None:
    """Two charges of order-1 in the journal, both the second tenant's: the run, completed,
    has none (its own request went under another key, and was never applied)."""
    _, history = _charged_only_by_the_neighbour()
    verdict = check_isolation(history, WORKFLOW)
    assert verdict.valid is False
    assert "applied only by" in verdict.summary


def test_a_neighbour_that_did_not_end_as_expected_may_be_harmed_or_the_engines_own() -> None:
    """Without a fault, a neighbour stopped for review or failed: the run may have harmed it,
    or the engine ends so alone too (its own recording would say); unknown, not false."""
    stuck = neighbour(final_status="needs_review")
    verdict = check_isolation(shared_world(neighbours=[stuck]), WORKFLOW)
    assert verdict.valid == "unknown" and "needs_review" in verdict.summary
    failed = neighbour(failures=[FailureRecord(where="worker 0", error="E: x", traceback="")])
    verdict = check_isolation(shared_world(neighbours=[failed]), WORKFLOW)
    assert verdict.valid == "unknown" and "failed" in verdict.summary


def test_a_neighbour_whose_charge_the_run_made_was_harmed() -> None:
    """The second tenant completed, but the only charge of its order is the run's (its request
    was replayed the run's): false, whatever else it did."""
    history = shared_world(neighbours=[neighbour(applied=[])])
    verdict = check_isolation(history, WORKFLOW)
    assert verdict.valid is False and "tenant neighbour" in verdict.summary
    assert "applied only by the run" in verdict.summary


def test_an_object_named_by_its_content_is_everyones() -> None:
    """The neighbour stored the artifact first; the run's receipt names it, and the run has no
    effect of its own for it: the same bytes are the same object."""
    address = "a" * 64
    stored = signed(
        effect(5, service="artifacts", operation="put", key=address, resource_id=address),
        NEIGHBOUR,
    )
    put = signed(request(5, "put", service="artifacts", key=address, idempotency_key=None))
    row = ledger_row(key="run/put", service="artifacts", operation_id="upload/put").model_copy(
        update={"receipt": Receipt(resource_id=address)}
    )
    history = shared_world(
        requests=[signed(request(1)), put],
        effects=[ledger_row(key="order-1/create_charge"), row],
        neighbours=[neighbour(applied=[*neighbour().applied, stored])],
    )
    assert check_isolation(history, WORKFLOW).valid is True


def test_without_the_ledger_of_a_party_the_journal_alone_is_unknown() -> None:
    history = shared_world(ledger=False, effects=[])
    verdict = check_isolation(history, WORKFLOW)
    assert verdict.valid == "unknown" and "not visible" in verdict.summary
    blind = shared_world(neighbours=[neighbour(readable=False, effects=[], checkpoints=[])])
    assert check_isolation(blind, WORKFLOW).valid == "unknown"


def test_the_journal_half_judges_without_a_ledger() -> None:
    copied = signed(request(5, idempotency_key="order-1/create_charge"), NEIGHBOUR)
    history = shared_world(ledger=False, effects=[], neighbours=[neighbour(requests=[copied])])
    assert check_isolation(history, WORKFLOW).valid is False


def test_a_request_nobody_signed_leaves_the_journal_unattributed() -> None:
    history = shared_world(requests=[signed(request(1)), request(2, "charge_by_key")])
    verdict = check_isolation(history, WORKFLOW)
    assert verdict.valid == "unknown" and "no origin" in verdict.summary


def test_a_failed_ledger_row_has_no_receipt_to_judge() -> None:
    failed = ledger_row(status=EffectStatus.FAILED).model_copy(update={"receipt": None})
    assert check_isolation(shared_world(effects=[failed]), WORKFLOW).valid is True


def test_origins_are_who_signed_the_records() -> None:
    assert shared_world().origin == MAIN
    assert {r.origin for r in shared_world().neighbours[0].requests} == {NEIGHBOUR}
    assert checkpoint(1, "received").approvals == []


def test_an_engine_whose_workers_run_any_workflow_is_unknown() -> None:
    """DBOS recovers every pending workflow as it launches: the neighbour's worker may have sent
    the run's requests, signed as the neighbour."""
    copied = signed(request(5, idempotency_key="order-1/create_charge"), NEIGHBOUR)
    history = shared_world(lacks=[ANY_WORKFLOW], neighbours=[neighbour(requests=[copied])])
    verdict = check_isolation(history, WORKFLOW)
    assert verdict.valid == "unknown" and "whatever workflow" in verdict.summary


# -- the mutation score's survivors (issue 26, point 7) -------------------------------------

THEIR_CHARGE = Receipt(resource_id="ch_9")  # the neighbour's charge, as neighbour() made it


def _carrying(*approvals: dict[str, JsonValue]) -> list[CheckpointRecord]:
    """The good lineage, its third checkpoint carrying `approvals`."""
    one, two, three, four = lineage()
    return [one, two, three.model_copy(update={"approvals": list(approvals)}), four]


def _foreign_receipt_after(first: EffectRecord) -> bool | str:
    """The run's ledger: `first`, then a row whose receipt names the neighbour's charge."""
    theirs = ledger_row(key="order-1/create_charge").model_copy(update={"receipt": THEIR_CHARGE})
    return check_isolation(shared_world(effects=[first, theirs]), WORKFLOW).valid


def test_every_ledger_row_is_judged_after_one_without_a_receipt_or_of_its_own() -> None:
    failed = ledger_row(status=EffectStatus.FAILED).model_copy(update={"receipt": None})
    assert _foreign_receipt_after(failed) is False
    assert _foreign_receipt_after(ledger_row(key="order-1/create_charge")) is False


def test_a_resource_the_run_applied_itself_is_its_own_whoever_else_names_it() -> None:
    """A service that hands out one id twice: the run's receipt names its own effect's."""
    also = signed(effect(5, idempotency_key="b/charge", resource_id="ch_1"), NEIGHBOUR)
    history = shared_world(neighbours=[neighbour(applied=[*neighbour().applied, also])])
    assert check_isolation(history, WORKFLOW).valid is True


def test_requests_without_an_idempotency_key_share_no_key() -> None:
    publish = request(7, "publish", service="publisher", key="r-1", idempotency_key=None)
    theirs = request(8, "publish", service="publisher", key="r-2", idempotency_key=None)
    history = shared_world(
        requests=[*shared_world().requests, signed(publish)],
        neighbours=[neighbour(requests=[*neighbour().requests, signed(theirs, NEIGHBOUR)])],
    )
    assert check_isolation(history, WORKFLOW).valid is True


def test_only_a_granted_approval_is_one_to_take() -> None:
    """The neighbour's approver refused; the run's checkpoint naming that answer took nothing
    from it (whether anyone approved the run is another checker's question)."""
    refused = _granted(TENANT_B_APPROVER, "tiny_order:2").model_copy(update={"status": "denied"})
    history = shared_world(
        checkpoints=_carrying({"gate": "charge_ok", "actor": TENANT_B_APPROVER}),
        neighbours=[neighbour(approvals=[refused])],
    )
    assert check_isolation(history, WORKFLOW).valid is True


def test_every_approval_a_checkpoint_carries_is_judged() -> None:
    """After the run's own, after one nobody gave, after one naming no person: the neighbour's."""
    own: dict[str, JsonValue] = {"gate": "charge_ok", "actor": "operator@example.test"}
    theirs: dict[str, JsonValue] = {"gate": "charge_ok", "actor": TENANT_B_APPROVER}
    nobody: dict[str, JsonValue] = {"gate": "charge_ok", "actor": "nobody@example.test"}
    for before in (own, nobody):
        history = shared_world(
            checkpoints=_carrying(before, theirs),
            approvals=[_granted("operator@example.test", "tiny_order:1")],
            neighbours=[neighbour(approvals=[_granted(TENANT_B_APPROVER, "tiny_order:2")])],
        )
        verdict = check_isolation(history, WORKFLOW)
        assert verdict.valid is False and TENANT_B_APPROVER in verdict.summary
    unnamed = shared_world(checkpoints=_carrying({"gate": "charge_ok", "actor": ["a", "b"]}))
    assert check_isolation(unnamed, WORKFLOW).valid is True


def test_a_compensated_saga_is_done_only_when_its_scenario_expects_compensation() -> None:
    elsewhere = shared_world(applied=[], effects=[], final_status="compensated")
    assert check_isolation(elsewhere, WORKFLOW).valid is True  # not done: nothing to miss
    expected = elsewhere.model_copy(update={"expected_status": "compensated"})
    verdict = check_isolation(expected, WORKFLOW)
    assert verdict.valid is False and "ended compensated" in verdict.summary


def test_an_effect_of_another_key_or_operation_is_not_the_one_expected() -> None:
    """The run refunded order-1 and charged order-2: its charge of order-1 is the neighbour's."""
    refund = signed(effect(1, operation="refund"))
    other = signed(effect(2, key="order-2"))
    history = shared_world(applied=[refund, other], effects=[])
    verdict = check_isolation(history, WORKFLOW)
    assert verdict.valid is False and "applied only by" in verdict.summary


def test_an_expected_effect_nobody_applied_is_no_crossing() -> None:
    missing = ExpectedEffectRecord(service="payments", business_key="order-7")
    history = shared_world(expected=[missing], applied=[], effects=[])
    assert check_isolation(history, WORKFLOW).valid is True


def test_every_expected_effect_is_judged_after_one_the_run_applied() -> None:
    both = [CHARGE, ExpectedEffectRecord(service="payments", business_key="order-2")]
    theirs = signed(effect(5, key="order-2", idempotency_key="b/2"), NEIGHBOUR)
    history = shared_world(
        expected=both, neighbours=[neighbour(applied=[*neighbour().applied, theirs])]
    )
    verdict = check_isolation(history, WORKFLOW)
    assert verdict.valid is False and "[order-2] was applied only by" in verdict.summary


def test_an_effect_applied_only_elsewhere_cites_the_first_such() -> None:
    twice, history = _charged_only_by_the_neighbour()
    verdict = check_isolation(history, WORKFLOW)
    assert verdict.evidence[1].endswith(cite_effect(twice[0]))
    assert verdict.refs == []  # a neighbour's record is cited in words only
