"""`killpoint merge` refuses a sharded campaign with a shard missing: in CI, a lost artifact
must not turn a campaign into a smaller one that passes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from killpoint.harness.cli import app
from tests.support.campaigns import sample_campaign


def _merge(tmp_path: Path, shards: Sequence[str | None]) -> tuple[int, str]:
    paths = []
    for n, shard in enumerate(shards):
        path = tmp_path / f"result-{n}.json"
        path.write_text(sample_campaign().model_copy(update={"shard": shard}).model_dump_json())
        paths.append(str(path))
    done = CliRunner().invoke(app, ["merge", *paths, "--json"])
    return done.exit_code, done.stderr


@pytest.mark.parametrize(
    ("shards", "named"),
    [
        (["1/4", "2/4", "4/4"], "3/4 (1 of 4 missing)"),
        (["2/2"], "1/2 (1 of 2 missing)"),
        (["1/9", "9/9"], "2/9, 3/9, 4/9 … (7 of 9 missing)"),
        (["1/2", "2/2", "1/3"], "2/3, 3/3 (2 of 3 missing)"),
        (["7/3", "1/3", "2/3"], "3/3 (1 of 3 missing)"),  # a shard out of range is none
    ],
)
def test_a_missing_shard_is_named_in_one_line_and_exit_2(
    tmp_path: Path, shards: list[str], named: str
) -> None:
    code, err = _merge(tmp_path, shards)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"not every shard is here: {named}" in err


@pytest.mark.parametrize("shards", [["1/2", "2/2"], [None], [None, None], ["1/1"], ["x/y"]])
def test_every_shard_or_a_whole_campaign_merges(tmp_path: Path, shards: list[str | None]) -> None:
    """The sample has one violating run: merged, it exits 1."""
    code, err = _merge(tmp_path, shards)
    assert code == 1 and "not every shard" not in err
