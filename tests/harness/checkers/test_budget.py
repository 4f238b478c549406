"""budget_preserved on hand-built histories: the lineage half needs the budgets trusted
checkpoints carry, the journal half judges any engine."""

from __future__ import annotations

from killpoint.fake_services.faults import FaultMode, FaultPlan, FaultRule
from killpoint.harness.checkers.budget import check_budget
from killpoint.harness.results import EvidenceRef
from tests.support.histories import (
    WORKFLOW,
    checkpoint,
    completed_run,
    lineage,
    read,
    request,
    schedule,
    unreadable,
)

DUPLICATED = schedule(
    network=FaultPlan.of(
        FaultRule(service="payments", operation="create_charge", mode=FaultMode.DUPLICATE_DELIVERY)
    )
)


def test_budgets_that_only_decrease_within_the_attempts_are_true() -> None:
    verdict = check_budget(completed_run(), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "1 attempt(s) within 3; budgets never grew"


def test_a_budget_that_grows_back_after_a_restart_is_false_at_that_checkpoint() -> None:
    one, two, three, _ = lineage()
    reset = checkpoint(4, "verified", status="completed", attempts_left=3)
    verdict = check_budget(completed_run(checkpoints=[one, two, three, reset]), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary.startswith("attempts_left went up from 2 to 3 at checkpoint #4")
    assert verdict.evidence == [
        "checkpoint #3: attempts_left=2",
        "checkpoint #4 (verified): attempts_left=3",
    ]
    assert verdict.refs == [EvidenceRef(kind="checkpoint", index=4)]


def test_more_attempts_than_the_budget_is_false_even_without_a_history_reader() -> None:
    sends = [request(seq) for seq in (1, 2, 3, 4)]
    verdict = check_budget(unreadable(completed_run(requests=[*sends, read(5)])), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary == "the services saw 4 attempts; the budget allowed 3"
    assert verdict.refs == [EvidenceRef(kind="request", index=4)]
    assert verdict.evidence[1].startswith("journal #4: payments.create_charge [order-1]")


def test_an_engine_without_a_history_reader_is_unknown_not_true() -> None:
    verdict = check_budget(unreadable(completed_run()), WORKFLOW)
    assert verdict.valid == "unknown"
    assert "no history reader" in verdict.summary


def test_a_trusted_checkpoint_without_a_budget_is_unknown() -> None:
    one, two, three, four = lineage()
    bare = three.model_copy(update={"budget": None})
    verdict = check_budget(completed_run(checkpoints=[one, two, bare, four]), WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "trusted checkpoint #3 carries no budget"


def test_an_untrusted_checkpoint_is_not_the_engine_s_lineage() -> None:
    one, two, _, four = lineage()
    tampered = checkpoint(3, "charged", status="untrusted", attempts_left=99, trusted=False)
    verdict = check_budget(completed_run(checkpoints=[one, two, tampered, four]), WORKFLOW)
    assert verdict.valid is True


def test_duplicated_deliveries_over_the_budget_are_unknown_not_false() -> None:
    copies = [request(seq) for seq in (1, 2, 3, 4)]
    verdict = check_budget(completed_run(schedule=DUPLICATED, requests=copies), WORKFLOW)
    assert verdict.valid == "unknown"
    assert "duplicated" in verdict.summary


def test_duplicated_deliveries_within_the_budget_are_still_judged() -> None:
    copies = [request(1), request(2), read(3)]
    verdict = check_budget(completed_run(schedule=DUPLICATED, requests=copies), WORKFLOW)
    assert verdict.valid is True


# -- the mutation score's survivors (issue 26, point 7) -------------------------------------


def _first_carries(**budget: float) -> bool | str:
    """The good run whose first checkpoint carries `budget` (the limits are the previous)."""
    one, *rest = lineage()
    first = one.model_copy(update={"budget": budget})
    return check_budget(completed_run(checkpoints=[first, *rest]), WORKFLOW).valid


def test_a_first_checkpoint_is_held_to_the_scenario_s_limits_in_every_field() -> None:
    """attempts 3, steps 10 (LIMITS); cost 10 000 and time one day (their defaults)."""
    at_limits = {"cost_left": 10_000, "time_left_ms": 86_400_000}
    assert _first_carries(attempts_left=3, steps_left=10, **at_limits) is True
    for field, over in (
        ("attempts_left", 3.5),
        ("steps_left", 10.5),
        ("cost_left", 10_000.5),
        ("time_left_ms", 86_400_001),
    ):
        assert _first_carries(**{field: over}) is False, field


def test_a_budget_above_the_limits_at_the_first_checkpoint_cites_the_limits() -> None:
    _, *rest = lineage()
    grown = checkpoint(1, "received", attempts_left=4)
    verdict = check_budget(completed_run(checkpoints=[grown, *rest]), WORKFLOW)
    assert verdict.evidence == [
        "the budget limits: attempts_left=3",
        "checkpoint #1 (received): attempts_left=4",
    ]


def test_a_field_a_checkpoint_leaves_out_keeps_its_last_value() -> None:
    """#2 says nothing of steps; #3's steps are held to #1's, not to the limits."""
    one, two, three, four = lineage()
    silent = two.model_copy(update={"budget": {"attempts_left": 3}})
    low = one.model_copy(update={"budget": {"attempts_left": 3, "steps_left": 5}})
    verdict = check_budget(completed_run(checkpoints=[low, silent, three, four]), WORKFLOW)
    assert verdict.valid is False
    assert verdict.summary.startswith("steps_left went up from 5 to 7 at checkpoint #3")


def test_exactly_the_attempts_allowed_are_within_the_budget() -> None:
    sends = [request(seq) for seq in (1, 2, 3)]
    verdict = check_budget(completed_run(requests=[*sends, read(4)]), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "3 attempt(s) within 3; budgets never grew"
    duplicated = completed_run(schedule=DUPLICATED, requests=sends)
    assert check_budget(duplicated, WORKFLOW).valid is True


def test_writes_to_the_artifact_store_are_no_attempts() -> None:
    stored = [request(seq, "put", service="artifacts", key=f"a-{seq}") for seq in (2, 3, 4)]
    verdict = check_budget(completed_run(requests=[request(1), *stored]), WORKFLOW)
    assert verdict.valid is True
    assert verdict.summary == "1 attempt(s) within 3; budgets never grew"


def test_a_reader_that_shows_no_trusted_checkpoint_is_unknown() -> None:
    verdict = check_budget(completed_run(checkpoints=[]), WORKFLOW)
    assert verdict.valid == "unknown"
    assert verdict.summary == "no trusted checkpoint carries a budget"


def test_a_rise_no_larger_than_the_float_tolerance_is_no_growth() -> None:
    """A budget read back through floats may gain a millionth; that much is not a reset."""
    assert _first_carries(attempts_left=3 + 1e-6) is True
    assert _first_carries(attempts_left=3 + 2e-6) is False
