"""The concurrency soak: its judge on hand-built records, and a reduced race on PostgreSQL.

The full size (8 procs x 200 workflows) is `benchmarks/soak.py`; here 3 x 20, a few seconds."""

from __future__ import annotations

from pathlib import Path

import pytest

from killpoint.harness.catalogue import installed
from killpoint.harness.engines.registry import load_engine
from killpoint.harness.soak import Soak, judge_lineages


def test_a_clean_lineage_counts_its_transitions_and_takeovers() -> None:
    forks, transitions, takeovers = judge_lineages(
        ["w"], {"w": [(1, 0), (2, 1), (3, 1), (4, 2)]}, {"w": [1, 1, 2]}
    )
    assert (forks, transitions, takeovers) == ([], 3, 1)


@pytest.mark.parametrize(
    ("checkpoints", "log", "why"),
    [
        ([(1, 0), (2, 1), (2, 2)], [], "sequences [1, 2, 2]"),
        ([(1, 0), (3, 1)], [], "sequences [1, 3]"),
        ([(1, 0), (2, 2), (3, 1)], [], "wrote a checkpoint after a newer one"),
        ([(1, 0), (2, 1)], [2, 1], "wrote the effect log after a newer one"),
    ],
)
def test_a_fork_or_a_stale_write_is_named(
    checkpoints: list[tuple[int, int]], log: list[int], why: str
) -> None:
    forks, _, _ = judge_lineages(["w"], {"w": checkpoints}, {"w": log})
    assert len(forks) == 1 and why in forks[0]


@pytest.mark.postgres
def test_workers_racing_under_sigkills_leave_one_lineage_one_effect_and_a_reason(
    tmp_path: Path, postgres_url: str
) -> None:
    result = Soak(
        load_engine(None),
        installed().scenario("order_saga"),
        postgres_url,
        tmp_path,
        procs=3,
        workflows=20,
        time_limit_s=90,
    ).run()
    assert result.ok, "\n".join(result.lines())
    # the race really happened: workers died mid-run and others took their workflows over
    assert result.kills > 0 and result.takeovers > 0, "\n".join(result.lines())
    assert result.transitions >= 20 * 4
