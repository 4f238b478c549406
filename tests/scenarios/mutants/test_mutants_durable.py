"""The dead-letter mutant is caught only by judging from durable records: on its named case the
oracle judges it false from the store and the operator queue, true (nothing false) when it
takes the worker's word, as it did before; the reference passes the same schedule."""

from __future__ import annotations

from pathlib import Path

from killpoint.harness.campaign.execute import Campaign, CampaignConfig, expectation
from killpoint.harness.checkers import check_all
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import Verdict
from killpoint.scenarios import CATALOGUE
from killpoint.scenarios.mutants import MUTANTS

SCENARIO = CATALOGUE["order_saga"]
CASE = next(c for c in SCENARIO.cases if c.name == "dead_letter_after_max_deliveries")


def _run(spec: EngineSpec, root: Path) -> History:
    config = CampaignConfig(scenarios=[SCENARIO], workdir=root, engine=spec)
    with Campaign(config) as campaign:
        _, history = campaign.execute(SCENARIO, CASE.schedule, "named", CASE.expect)
    return history


def _judged(history: History) -> dict[str, Verdict]:
    verdicts = [*check_all(history, SCENARIO.workflow), expectation(history, CASE.expect)]
    return {v.checker: v for v in verdicts}


def _as_the_worker_said(history: History) -> History:
    """The history as an oracle that takes the worker's word sees it: the end the last worker
    returned is the end, and no queue is read."""
    return history.model_copy(
        update={
            "final_status": history.claimed_status,
            "final_state": history.claimed_state,
            "final_reason": history.claimed_reason,
            "claimed_status": None,
            "keeps_queue": False,
            "queued": None,
        }
    )


def test_a_dead_letter_reported_and_never_recorded_is_false_from_the_durable_records(
    tmp_path: Path,
) -> None:
    history = _run(MUTANTS["dead_letter_only_reported"], tmp_path)
    assert (history.claimed_status, history.final_status) == ("dead_lettered", "running")
    verdicts = _judged(history)
    false = {name for name, v in verdicts.items() if v.valid is False}
    assert {"progress", "durable_outcome", "operator_queue", "expected_recovery"} <= false
    assert verdicts["operator_queue"].evidence[-1] == "operator queue: no entry for the run"


def test_the_same_run_judged_on_the_worker_s_word_passes(tmp_path: Path) -> None:
    history = _as_the_worker_said(_run(MUTANTS["dead_letter_only_reported"], tmp_path))
    verdicts = _judged(history)
    assert [v for v in verdicts.values() if v.valid is False] == []
    assert verdicts["progress"].valid is True  # "dead_lettered after 22 worker(s)"


def test_the_reference_dead_letters_durably_queues_it_and_writes_nothing_after(
    tmp_path: Path,
) -> None:
    history = _run(REFERENCE, tmp_path)
    assert history.final_status == history.claimed_status == "dead_lettered"
    assert history.queued is not None and "delivered 21 times" in history.queued.detail
    verdicts = _judged(history)
    assert all(v.valid is True for v in verdicts.values()), verdicts
