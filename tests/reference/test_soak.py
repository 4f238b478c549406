"""The concurrency soak: its judges on hand-built records, and a reduced race on PostgreSQL.

The full size (8 procs x 200 workflows) is `benchmarks/soak.py`; here 3 x 20, a few seconds."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.harness.catalogue import installed
from killpoint.harness.engines.registry import load_engine
from killpoint.harness.run.databases import drop_scratch, world_database
from tests.support.soak import Soak, SoakResult, judge_lineages
from tests.support.soak_writes import Write, judge_writes


def test_a_clean_lineage_counts_its_transitions_and_takeovers() -> None:
    forks, transitions, takeovers = judge_lineages(["w"], {"w": [(1, 0), (2, 1), (3, 1), (4, 2)]})
    assert (forks, transitions, takeovers) == ([], 3, 1)


@pytest.mark.parametrize(
    ("checkpoints", "why"),
    [([(1, 0), (2, 1), (2, 2)], "sequences [1, 2, 2]"), ([(1, 0), (3, 1)], "sequences [1, 3]")],
)
def test_a_gap_or_a_fork_in_a_lineage_is_named(
    checkpoints: list[tuple[int, int]], why: str
) -> None:
    forks, _, _ = judge_lineages(["w"], {"w": checkpoints})
    assert len(forks) == 1 and why in forks[0]


def _lease(token: int) -> Write:
    return Write("workflows", None, token)


def test_writes_each_under_the_last_token_taken_are_clean() -> None:
    log = [
        _lease(1),
        Write("effect_log", None, 1),
        Write("checkpoints", 2, 1),
        _lease(2),
        Write("checkpoints", 3, 2),
    ]
    assert judge_writes({"w": log}) == []


@pytest.mark.parametrize(
    ("log", "why"),
    [
        (  # a holder whose lease lapsed wrote after the next one took it (no fencing token)
            [_lease(1), _lease(2), Write("effect_log", None, 1)],
            "an effect-log row written under token 1 after token 2 was taken",
        ),
        (
            [_lease(1), _lease(2), Write("checkpoints", 2, 1)],
            "checkpoint 2 written under token 1 after token 2 was taken",
        ),
        (  # the last writer won: the second write of a sequence erased the first
            [_lease(1), Write("checkpoints", 2, 1), Write("checkpoints", 2, 1)],
            "checkpoint 2 written twice",
        ),
    ],
)
def test_a_write_under_a_superseded_token_or_a_sequence_written_twice_is_named(
    log: list[Write], why: str
) -> None:
    (stale,) = judge_writes({"w": log})
    assert stale.startswith("w: ") and why in stale


def _soak(tmp_path: Path, url: str, engine: str | None, stop_at_stale: bool = False) -> SoakResult:
    """A 3 x 20 race in a schema of the test's own, dropped after (a soak that finds a stale
    write keeps its own schema for inspection; the shared test database keeps none)."""
    own = world_database(url, tmp_path)
    try:
        return Soak(
            load_engine(engine),
            installed().scenario("order_saga"),
            own,
            tmp_path,
            procs=3,
            workflows=20,
            time_limit_s=90,
            stop_at_stale=stop_at_stale,
        ).run()
    finally:
        drop_scratch(url, own)


@pytest.mark.postgres
def test_workers_racing_under_sigkills_leave_one_lineage_one_effect_and_a_reason(
    tmp_path: Path, postgres_url: str
) -> None:
    result = _soak(tmp_path, postgres_url, None)
    assert result.ok, "\n".join(result.lines())
    # the race really happened: workers died mid-run and others took their workflows over,
    # live holders paused at a commit among them (and their writes were refused)
    assert result.kills > 0 and result.takeovers > 0, "\n".join(result.lines())
    assert result.overtaken > 0 and result.refusals["StaleFenceError"] > 0
    assert result.transitions >= 20 * 4


@pytest.mark.postgres
@pytest.mark.parametrize("mutant", ["no_compare_and_swap", "lease_without_fencing_token"])
def test_the_race_catches_a_store_that_lets_a_superseded_holder_write(
    mutant: str, tmp_path: Path, postgres_url: str
) -> None:
    """Found: at 3 x 20 the soak passed both. A holder paused at a commit until overtaken
    writes while its successor starts: the record shows the write under its superseded token
    (neither store refuses it), though the lineage ends whole and the services dedupe."""
    result = _soak(tmp_path, postgres_url, f"mutant:{mutant}", stop_at_stale=True)
    assert result.stale, "\n".join(result.lines())
