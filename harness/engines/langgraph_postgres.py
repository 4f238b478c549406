"""LangGraph's `PostgresSaver` for a world on PostgreSQL, wrapped like the SQLite one.

The world's URL names its schema in libpq's `options` (`-csearch_path=kp_…`), so the saver's
tables land in that schema and two worlds on one server never share a thread.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import psycopg
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata
from langgraph.checkpoint.postgres import PostgresSaver

if TYPE_CHECKING:
    from killpoint.harness.engines.langgraph import Hooks

TABLES = ("checkpoint_writes", "checkpoint_blobs", "checkpoints")


class HookedPostgresSaver(PostgresSaver):
    hooks: Hooks

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        def write() -> RunnableConfig:
            return PostgresSaver.put(self, config, checkpoint, metadata, new_versions)

        return self.hooks.around(write)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        def write() -> None:
            PostgresSaver.put_writes(self, config, writes, task_id, task_path)

        self.hooks.around(write)


@contextmanager
def open_postgres(conninfo: str, hooks: Hooks) -> Iterator[HookedPostgresSaver]:
    with HookedPostgresSaver.from_conn_string(conninfo) as saver:
        assert isinstance(saver, HookedPostgresSaver)
        saver.hooks = hooks
        saver.setup()
        yield saver


def clear_postgres(conninfo: str) -> None:
    """Every thread's rows gone (the tables stay, made by the saver's own migrations)."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for table in TABLES:
            exists = conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()
            if exists and exists[0] is not None:
                conn.execute(f"DELETE FROM {table}")
