"""The world a campaign owns: its own store, so campaigns never read each other's runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

import scenarios
from harness.runner import run_schedule
from harness.schedule import FaultSchedule
from harness.world import World, campaign_store
from tests.conftest import _check_reachable, _postgres_url


def test_two_campaigns_on_one_sqlite_default_use_separate_files(tmp_path: Path) -> None:
    first, second = campaign_store(None, tmp_path / "a"), campaign_store(None, tmp_path / "b")
    assert first.url != second.url
    first.close()
    second.close()


@pytest.mark.postgres
def test_two_campaigns_on_one_postgres_url_get_a_schema_each(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    url = _postgres_url()
    _check_reachable(url)
    worlds = [World.open(tmp_path / name, url) for name in ("a", "b")]
    try:
        schemas = [w.store.schema for w in worlds]
        assert None not in schemas and schemas[0] != schemas[1]
        clean = FaultSchedule(scenario="email", run_id="clean")
        for world in worlds:  # the same workflow id in both: neither sees the other's
            history = run_schedule(world, scenarios.get("email"), clean)
            assert history.final_status == "completed"
            assert history.hits and history.applied  # it really ran, not found done already
            assert len(history.checkpoints) == len({c.sequence for c in history.checkpoints})
    finally:
        for world in worlds:
            world.close()
        engine = create_engine(url)
        with engine.begin() as conn:
            for schema in schemas:
                conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        engine.dispose()
