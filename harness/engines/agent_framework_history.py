"""The history of an Agent Framework engine, as the oracle reads it: the framework's own
checkpoint files, listed through its `FileCheckpointStorage`, and the units' state each holds.

Checkpoints are numbered by their depth in the framework's lineage (`previous_checkpoint_id`,
or for the first checkpoint of a run re-entered with a fresh message, the checkpoint it went
on from, which the adapter notes in the checkpoint's metadata); the entry checkpoint of a run,
which holds only the start message, is a link of the lineage but not a record. Two checkpoints
with one parent keep one number: the sequence checker sees the fork.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from agent_framework import FileCheckpointStorage, WorkflowCheckpoint

from killpoint.contract.workflow import Workflow
from killpoint.harness.engines import units
from killpoint.harness.engines.units import State
from killpoint.harness.engines.units_reader import UnitsReader
from killpoint.harness.protocol import CheckpointRecord, StoreHandle

FOLDER = "agent-framework"  # under the store's work folder: the framework's checkpoint files
STATE_KEY = "killpoint.units"  # the shared-state key holding the units' JSON state
CONTINUES = "killpoint.continues"  # metadata: the checkpoint a re-entered run goes on from
T = TypeVar("T")


def checkpoint_folder(handle: StoreHandle) -> Path:
    return handle.workdir / FOLDER / "checkpoints"


def in_new_loop(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine under `asyncio.run`, on a thread of its own if this one has a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    box: list[T | BaseException] = []

    def body() -> None:
        try:
            box.append(asyncio.run(make()))
        except BaseException as exc:
            box.append(exc)

    thread = threading.Thread(target=body, name="killpoint-agent-framework")
    thread.start()
    thread.join()
    result = box[0]
    if isinstance(result, BaseException):
        raise result
    return result


async def checkpoints_of(storage: FileCheckpointStorage, workflow_id: str) -> list[Checkpoint]:
    listed = await storage.list_checkpoints(workflow_name=workflow_id)
    return [Checkpoint(c, _size(storage, c)) for c in listed]


def _size(storage: FileCheckpointStorage, checkpoint: WorkflowCheckpoint) -> int | None:
    path = storage.storage_path / f"{checkpoint.checkpoint_id}.json"
    try:
        return path.stat().st_size
    except OSError:
        return None


class Checkpoint:
    def __init__(self, checkpoint: WorkflowCheckpoint, size: int | None) -> None:
        self.checkpoint, self.size = checkpoint, size
        self.id = checkpoint.checkpoint_id
        self.parent = checkpoint.previous_checkpoint_id or checkpoint.metadata.get(CONTINUES)
        self.state: State | None = checkpoint.state.get(STATE_KEY)


def records_of(workflow: Workflow, checkpoints: list[Checkpoint]) -> list[CheckpointRecord]:
    """The checkpoints that hold the units' state, numbered by their depth in the framework's
    lineage (`previous_checkpoint_id`): two children of one parent share a number — a fork."""
    by_id = {c.id: c for c in checkpoints}
    depth: dict[str, int] = {}

    def depth_of(c: Checkpoint) -> int:
        if c.id not in depth:
            depth[c.id] = 0  # a cycle, should one exist, ends here
            parent = by_id.get(c.parent) if c.parent else None
            above = depth_of(parent) if parent is not None else 0
            depth[c.id] = above + (c.state is not None)
        return depth[c.id]

    held = [c for c in checkpoints if c.state is not None]
    held.sort(key=lambda c: (depth_of(c), c.checkpoint.timestamp))
    return [
        units.checkpoint_record(workflow, depth_of(c), c.state, c.size) for c in held if c.state
    ]


class CheckpointReader(UnitsReader):
    """The framework's own records: its checkpoint files, read through its storage."""

    def checkpoints(self, workflow_id: str) -> list[CheckpointRecord]:
        folder = checkpoint_folder(self.handle)
        if not folder.exists():
            return []
        storage = FileCheckpointStorage(folder)
        listed = in_new_loop(lambda: checkpoints_of(storage, workflow_id))
        return records_of(self.workflow, listed)
