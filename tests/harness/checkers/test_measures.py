"""measure on hand-built histories: the raw figures a campaign's metrics are summed from, each
read off the history as it says (a recovery counted from the first death, a duplicate as each
effect beyond the first, a budget kept unless its checker or the run's end says otherwise)."""

from __future__ import annotations

from typing import Any

from killpoint.harness.checkers.measures import measure
from killpoint.harness.history import History
from killpoint.harness.results import RunMeasures, Verdict
from tests.support.histories import completed_run, effect, hit, ledger_row, lineage, worker


def _measured(verdicts: list[Verdict] | None = None, **changes: Any) -> RunMeasures:
    return measure(completed_run(**changes), verdicts or [])


def _recovered_run(**changes: Any) -> History:
    """Workers 0 and 1 killed (at t=5 and t=15), 2 and 3 ran to the end (t=25, t=35): worker 0
    resolved something of its own before dying (t=3), worker 1 its doubt at t=12, worker 3
    worker 1's at t=30."""
    fields: dict[str, Any] = {
        "workers": [
            worker(0, "killed", None, wall_s=0.125),
            worker(1, "sigkill", None, wall_s=0.5),
            worker(2, wall_s=1.0),
            worker(3, wall_s=2.0),
        ],
        "hits": [
            hit("reconcile.resolved", 3.0),
            hit("step.begin", 4.0),
            hit("step.begin", 11.0, worker=1),
            hit("reconcile.resolved", 12.0, worker=1),
            hit("step.end", 13.0, worker=1),
            hit("reconcile.resolved", 30.0, worker=3),
        ],
    }
    return completed_run(**{**fields, **changes})


def test_a_run_without_a_death_has_no_recovery_to_measure() -> None:
    measures = _measured()
    assert (measures.deaths, measures.workers) == (0, 1)
    assert (measures.resumed, measures.recovered) == (False, False)
    assert (measures.recovery_steps, measures.recovery_clock_s, measures.recovery_wall_s) == (
        0,
        0.0,
        0.0,
    )
    assert measures.unresolved_effect_age_s is None
    assert measures.deploy_strategy is None


def test_a_recovery_is_measured_from_the_first_death_to_the_last_worker() -> None:
    measures = measure(_recovered_run(), [])
    assert (measures.deaths, measures.workers) == (2, 4)
    assert (measures.resumed, measures.recovered) == (True, True)
    assert measures.recovery_steps == 4  # worker 1's three hits and worker 3's one
    assert measures.recovery_clock_s == 30.0  # worker 3's end (t=35) less worker 0's (t=5)
    assert measures.recovery_wall_s == 3.5  # workers 1 to 3, not the first to die


def test_a_run_that_resumed_and_did_not_end_is_not_recovered() -> None:
    measures = measure(_recovered_run(final_status="running"), [])
    assert (measures.resumed, measures.recovered) == (True, False)


def test_a_death_no_worker_followed_is_no_resumption() -> None:
    measures = _measured(workers=[worker(0), worker(1, "killed", None, wall_s=1.0)])
    assert (measures.deaths, measures.resumed, measures.recovered) == (1, False, False)
    assert (measures.recovery_clock_s, measures.recovery_wall_s) == (0.0, 0.0)
    assert measures.unresolved_effect_age_s is None


def test_an_effect_in_doubt_is_aged_by_the_latest_of_its_resolutions() -> None:
    """Worker 0's doubt resolved by worker 1 after 7s, worker 1's by worker 3 after 15s."""
    assert measure(_recovered_run(), []).unresolved_effect_age_s == 15.0


def test_steps_count_the_step_beginnings_alone() -> None:
    assert measure(_recovered_run(), []).steps == 2


def test_the_store_counts_checkpoints_and_ledger_rows_and_the_bytes_it_knows() -> None:
    sized = [c.model_copy(update={"size": 100 * c.sequence}) for c in lineage()[:3]]
    measures = _measured(checkpoints=[*sized, lineage()[3]], effects=[ledger_row()])
    assert (measures.checkpoints, measures.store_rows) == (4, 5)
    assert measures.store_bytes == 600  # the fourth checkpoint's size is unknown: no bytes


def test_duplicates_count_each_effect_beyond_the_first_per_business_action() -> None:
    """Once (order-1), twice (order-2), thrice (order-3): one duplicate and two."""
    applied = [effect(1), *(effect(n, key="order-2") for n in (2, 3))]
    applied += [effect(n, key="order-3") for n in (4, 5, 6)]
    assert _measured(applied=applied).duplicate_effects == 3


def test_downstream_attempts_count_the_writes_not_the_reads() -> None:
    assert _measured().downstream_attempts == 1


def test_a_run_stopped_for_a_person_needs_review() -> None:
    assert _measured().needs_review is False
    assert _measured(final_status="needs_review").needs_review is True


def test_a_budget_is_kept_unless_its_own_checker_says_it_was_not() -> None:
    others_failed = [
        Verdict(checker="budget_preserved", valid=True),
        Verdict(checker="single_effect", valid=False),
    ]
    assert _measured(others_failed).within_budget is True
    assert _measured([Verdict(checker="budget_preserved", valid="unknown")]).within_budget is True
    assert _measured([Verdict(checker="budget_preserved", valid=False)]).within_budget is False


def test_a_run_that_ran_out_of_budget_is_not_within_it() -> None:
    assert _measured(final_status="budget_exhausted").within_budget is False


def test_a_migration_failure_is_a_quarantine_for_the_schema() -> None:
    quarantined = "quarantined"
    assert _measured(final_status=quarantined, final_reason="schema 3").migration_failures == 1
    assert _measured(final_status=quarantined, final_reason="forged").migration_failures == 0
    assert _measured(final_reason="schema upgraded").migration_failures == 0
