"""A named case is judged only where it applies to the engine under test.

The seeds' cases were written for an engine with a ledger, a lease and version lineage, and
they crash it at boundaries of its own. On an engine that lacks one, or never reaches the
boundary, the case did not happen: its verdict is unknown ("not applicable"), never a
violation. Each rule is pinned on a hand-built history.
"""

from __future__ import annotations

from killpoint.harness.campaign.execute import expectation
from killpoint.harness.history import HitRecord, TamperRecord
from killpoint.harness.protocol import SHARED_PROCESS
from killpoint.harness.scenario import NamedCase
from killpoint.harness.schedule import ClockJump, HitPoint, Tamper
from killpoint.scenarios import CATALOGUE
from tests.support.histories import completed_run, effect, schedule


def _case(scenario: str, name: str) -> NamedCase:
    return next(c for c in CATALOGUE[scenario].cases if c.name == name)


def _hit(step: str, boundary: str) -> HitRecord:
    return HitRecord(worker=0, step=step, boundary=boundary, occurrence=1, time=0.0, journal_seq=0)


def test_a_case_whose_crash_point_the_engine_never_reaches_is_not_applicable() -> None:
    crashed = schedule(crashes=[HitPoint(worker=0, step="publish", boundary="effect.started")])
    history = completed_run(schedule=crashed, hits=[_hit("publish", "step.begin")])
    verdict = expectation(history, lambda h: "would be a violation")
    assert verdict.valid == "unknown"
    assert verdict.summary == (
        "not applicable: the engine never reached w0 publish:effect.started: "
        "the case's crash did not happen"
    )


def test_a_case_whose_clock_jump_never_happens_is_not_applicable() -> None:
    jump = ClockJump(at=HitPoint(worker=0, step="refund", boundary="effect.prepared"), seconds=9.0)
    history = completed_run(schedule=schedule(clock_jumps=[jump]), hits=[_hit("refund", "x")])
    verdict = expectation(history, lambda h: "1 approval(s) given, expected a renewed one")
    assert verdict.summary == (
        "not applicable: the engine never reached w0 refund:effect.prepared: "
        "the case's clock jump did not happen"
    )


def test_a_case_whose_crash_happened_is_judged() -> None:
    crashed = schedule(crashes=[HitPoint(worker=0, step="publish", boundary="effect.started")])
    history = completed_run(schedule=crashed, hits=[_hit("publish", "effect.started")])
    verdict = expectation(history, lambda h: "the post went out twice")
    assert verdict.valid is False and verdict.summary == "the post went out twice"


def test_a_tampering_the_engine_cannot_stage_is_not_applicable() -> None:
    tampered = schedule(tamper=[Tamper(after_worker=0, kind="flip_byte")])
    unstaged = TamperRecord(
        after_worker=0, kind="flip_byte", sequence=None, time=0.0, journal_seq=0, applied=False
    )
    verdict = expectation(completed_run(schedule=tampered, tampered=[unstaged]), lambda h: "x")
    assert verdict.valid == "unknown" and verdict.summary.startswith(
        "not applicable: the engine under test cannot stage flip_byte"
    )


def test_a_case_that_reads_the_ledger_is_not_applicable_to_an_engine_without_one() -> None:
    case = _case("research_publish", "crash_before_external_call")
    posted = completed_run(
        schedule=case.schedule,
        hits=[_hit("publish", "effect.started")],
        applied=[effect(1, service="cms", operation="create_post")],
    )
    assert case.expect(posted) == "ledger for publish: [], expected one receipt"
    verdict = expectation(posted.model_copy(update={"ledger": False}), case.expect)
    assert verdict.valid == "unknown"
    assert (
        verdict.summary == "not applicable: the engine keeps no effect ledger to hold the receipt"
    )


def test_the_lease_race_case_asks_nothing_of_an_engine_without_a_lease() -> None:
    case = _case("research_publish", "two_workers_recover")
    raced = completed_run(
        schedule=case.schedule,
        hits=[_hit("publish", "effect.prepared")],
        applied=[effect(1, service="cms", operation="create_post")],
    )
    assert case.expect(raced) == "no worker lost the race for the lease"
    verdict = expectation(raced.model_copy(update={"lacks": ["lease"]}), case.expect)
    assert verdict.valid == "unknown"
    assert verdict.summary == "not applicable: the engine takes no lease for a worker to lose"


def test_a_two_worker_case_in_process_is_not_applicable_to_a_one_per_process_engine() -> None:
    case = _case("research_publish", "two_workers_recover")
    raced = completed_run(schedule=case.schedule, hits=[_hit("publish", "effect.prepared")])
    verdict = expectation(raced.model_copy(update={"lacks": [SHARED_PROCESS]}), case.expect)
    assert verdict.summary == (
        "not applicable: the engine runs one worker per process: two need the real tier"
    )
