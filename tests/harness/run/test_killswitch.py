"""The kill-switch: stable hit identities, deaths exactly where scheduled, clock jumps."""

from __future__ import annotations

import pytest

from killpoint.contract.clock import FakeClock
from killpoint.harness.run.killswitch import Hit, Killed, KillSwitch
from killpoint.harness.schedule import ClockJump, FaultSchedule, HitPoint


def _switch(schedule: FaultSchedule, worker: int = 0) -> tuple[KillSwitch, list[Hit], FakeClock]:
    hits: list[Hit] = []
    clock = FakeClock()
    return KillSwitch(worker, schedule, clock, hits.append, advance=clock.advance), hits, clock


def test_hits_count_occurrences_per_step_and_boundary() -> None:
    switch, hits, _ = _switch(FaultSchedule(scenario="s", run_id="r"))
    switch("step.begin", "a")
    switch("checkpoint.committed", "a")
    switch("step.begin", "a")
    switch.transport("transport.response_received")
    assert [(h.step, h.boundary, h.occurrence) for h in hits] == [
        ("a", "step.begin", 1),
        ("a", "checkpoint.committed", 1),
        ("a", "step.begin", 2),
        ("a", "transport.response_received", 1),  # attributed to the step in progress
    ]


def test_death_is_a_base_exception_raised_at_the_scheduled_hit_only() -> None:
    point = HitPoint(worker=0, step="a", boundary="step.begin", occurrence=2)
    switch, hits, _ = _switch(FaultSchedule(scenario="s", run_id="r", crashes=(point,)))
    switch("step.begin", "a")
    with pytest.raises(Killed) as death:
        switch("step.begin", "a")
    assert not isinstance(death.value, Exception)  # `except Exception` cannot swallow it
    assert death.value.point == point
    assert len(hits) == 2  # the fatal hit is recorded before the death


def test_crashes_of_other_workers_do_not_fire() -> None:
    point = HitPoint(worker=1, step="a", boundary="step.begin")
    switch, _, _ = _switch(FaultSchedule(scenario="s", run_id="r", crashes=(point,)), worker=0)
    switch("step.begin", "a")  # worker 0 survives worker 1's scheduled death


def test_clock_jump_moves_the_clock_at_its_boundary() -> None:
    jump = ClockJump(at=HitPoint(worker=0, step="a", boundary="effect.prepared"), seconds=90)
    switch, _, clock = _switch(FaultSchedule(scenario="s", run_id="r", clock_jumps=(jump,)))
    before = clock.now()
    switch("step.begin", "a")
    assert clock.now() == before
    switch("effect.prepared", "a")
    assert clock.now() == before + 90
