"""Two workers recovering at once run in the real tier too: two forked processes take turns on
a baton in shared memory, and the same schedule gives the same interleaving as in process."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.history import History
from killpoint.harness.run.realtier import open_real_world, run_schedule_real
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World
from killpoint.scenarios import CATALOGUE

PAIRS = [(s.name, c.name) for s in CATALOGUE.values() for c in s.cases if c.schedule.interleave]
DEATH = {"killed": "sigkill"}  # how one death is spelled in each tier


@pytest.mark.realtier
@pytest.mark.parametrize(("scenario", "case"), PAIRS)
def test_a_two_worker_case_interleaves_alike_in_both_tiers(
    scenario: str, case: str, tmp_path: Path, checkpoint_key: bytes
) -> None:
    named = next(c for c in CATALOGUE[scenario].cases if c.name == case)
    with World.open(tmp_path / "in") as world:
        inprocess = run_schedule(world, CATALOGUE[scenario], named.schedule, REFERENCE)
    real_schedule = named.schedule.model_copy(update={"tier": "real"})
    with open_real_world(tmp_path / "real") as world:
        real = run_schedule_real(world, CATALOGUE[scenario], real_schedule, REFERENCE)

    def ends(h: History) -> list[tuple[int, str, str | None]]:
        return [(w.worker, DEATH.get(w.end, w.end), w.status) for w in h.workers]

    assert [h.label() for h in real.hits] == [h.label() for h in inprocess.hits]
    assert ends(real) == ends(inprocess)
    assert named.expect(real) is None and named.expect(inprocess) is None
