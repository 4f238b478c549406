"""The world a campaign owns: its own store, so campaigns never read each other's runs."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from killpoint import scenarios
from killpoint.harness.campaign.plan import singles
from killpoint.harness.engines.reference import REFERENCE, open_store, prepare
from killpoint.harness.run.databases import drop_scratch, schema_of, world_database
from killpoint.harness.run.runner import run_schedule
from killpoint.harness.run.world import World, store_for
from killpoint.harness.schedule import FaultSchedule, Tamper
from killpoint.reference.store import Store
from tests.support.fixtures import check_reachable, server_url


def test_two_campaigns_on_one_sqlite_default_use_separate_files(tmp_path: Path) -> None:
    first, second = store_for(tmp_path / "a"), store_for(tmp_path / "b")
    assert first.url != second.url
    assert first.url.startswith(f"sqlite:///{tmp_path / 'a'}")


@pytest.mark.postgres
def test_two_campaigns_on_one_postgres_url_get_a_schema_each(
    tmp_path: Path, checkpoint_key: bytes
) -> None:
    url = server_url()
    check_reachable(url)
    schemas: list[str] = []
    with ExitStack() as stack:
        stack.callback(_drop_schemas, url, schemas)  # last, once the worlds are closed
        worlds = [stack.enter_context(World.open(tmp_path / name, url)) for name in ("a", "b")]
        schemas += [w.store.url.partition("search_path%3D")[2] for w in worlds]
        assert all(s.startswith("kp_") for s in schemas) and schemas[0] != schemas[1]
        assert all(f"(schema {s})" in w.store.label for s, w in zip(schemas, worlds, strict=True))
        clean = FaultSchedule(scenario="email", run_id="clean")
        for world in worlds:  # the same workflow id in both: neither sees the other's
            history = run_schedule(world, scenarios.get("email"), clean, REFERENCE)
            assert history.final_status == "completed"
            assert history.hits and history.applied  # it really ran, not found done already
            assert len(history.checkpoints) == len({c.sequence for c in history.checkpoints})


def _drop_schemas(url: str, schemas: list[str]) -> None:
    engine = create_engine(url)
    with engine.begin() as conn:
        for schema in schemas:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
    engine.dispose()


def _commit_durability(store: Store) -> str:
    query = "PRAGMA synchronous" if store.url.startswith("sqlite") else "SHOW synchronous_commit"
    return str(store.db.reading().execute(text(query)).scalar())


def test_a_campaign_store_is_scratch_and_any_other_store_waits_for_the_disk(
    tmp_path: Path, store: Store, store_url: str
) -> None:
    """A campaign's store need only survive the process deaths it injects; a store opened
    anywhere else keeps the durability a user would expect of it."""
    with World.open(tmp_path, store_url if "postgresql" in store_url else None) as world:
        scratch = open_store(world.store)
        sqlite = store.url.startswith("sqlite")
        assert _commit_durability(scratch) == ("0" if sqlite else "off")  # OFF / off
        assert _commit_durability(store) == ("1" if sqlite else "on")  # NORMAL / on


def test_a_warmed_store_compiles_no_statement_during_runs(
    tmp_path: Path, store_url: str, checkpoint_key: bytes
) -> None:
    """The real tier warms its store before forking, so no worker compiles a statement of its
    own; this pins that the warm set covers what the engine runs (a new statement shape must
    join it)."""
    with World.open(tmp_path / "world", store_url) as world:
        prepare(world.store)  # what the real tier does before it forks a worker
        compiled = open_store(world.store).db.compiles
        for name in ("research_publish", "order_saga_refund", "approval_refund", "batch"):
            scenario = scenarios.get(name)
            clean = run_schedule(
                world, scenario, FaultSchedule(scenario=name, run_id="w-clean"), REFERENCE
            )
            assert clean.final_status in ("completed", "compensated")
            crashes = [run.schedule for run in singles(scenario, clean)]
            for schedule in crashes[:: max(1, len(crashes) // 8)]:
                run_schedule(world, scenario, schedule, REFERENCE)
        flipped = (Tamper(after_worker=0, kind="flip_byte"),)
        flip = FaultSchedule(scenario="email", run_id="w-tampered", tamper=flipped)
        run_schedule(world, scenarios.get("email"), flip, REFERENCE)
        assert open_store(world.store).db.compiles == compiled


@pytest.mark.postgres
def test_a_scratch_schema_is_dropped_and_a_pinned_one_never(tmp_path: Path) -> None:
    """`drop_scratch` drops what `world_database` made for an unpinned URL; a URL that pins its
    own schema (the user's) and a SQLite file are left alone."""
    url = server_url()
    check_reachable(url)
    made = world_database(url, tmp_path)
    pinned = world_database(url, tmp_path)  # as a user would pin it: a URL naming the schema

    def exists(at: str) -> bool:
        engine = create_engine(url)
        with engine.connect() as conn:
            found = conn.execute(
                text("SELECT 1 FROM pg_namespace WHERE nspname = :s"), {"s": schema_of(at)}
            ).first()
        engine.dispose()
        return found is not None

    try:
        drop_scratch(pinned, pinned)  # asked with the schema named: the user's, kept
        drop_scratch(None, made)  # a SQLite campaign made no schema
        assert exists(pinned) and exists(made)
        drop_scratch(url, made)
        assert not exists(made) and exists(pinned)
    finally:
        _drop_schemas(url, [schema_of(made), schema_of(pinned)])
