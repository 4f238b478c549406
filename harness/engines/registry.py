"""Finding the engine under test: the reference engine, or `module:factory` of a team's own.

The target of `--engine module:attr` is either an `EngineSpec` (full control: factory, history
reader, tamper hook) or a plain factory callable `(env, scenario) -> engine`. A plain factory
may carry a `reader` attribute `(world) -> HistoryReader`; without one, the engine is judged on
what the harness sees from outside (boundary hits at the transport, service journals), and the
checkers that need the engine's own records answer unknown.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from killpoint.harness.contract.errors import KillpointError
from killpoint.harness.contract.records import ApprovalRecord, EffectRecord
from killpoint.harness.protocol import CheckpointView, HistoryReader
from killpoint.harness.runner import REFERENCE, EngineSpec
from killpoint.harness.world import World


class NoHistory:
    """The history reader of an engine that exposes none: the oracle sees only the outside."""

    def checkpoints(self, workflow_id: str) -> list[CheckpointView]:
        return []

    def effects(self, workflow_id: str) -> list[EffectRecord]:
        return []

    def approvals(self, workflow_id: str) -> list[ApprovalRecord]:
        return []

    def compacted_below(self, workflow_id: str) -> int:
        return 0


def load_engine(ref: str | None) -> EngineSpec:
    """`None` or "reference" for ours, `mutant:NAME` for one of the mutants, otherwise import
    `module:attr` (the current folder is on the path, so a team's own module is found)."""
    if ref is None or ref == "reference":
        return REFERENCE
    if ref.startswith("mutant:"):
        from killpoint.scenarios.mutants import MUTANTS

        name = ref.removeprefix("mutant:")
        if name not in MUTANTS:
            raise KillpointError(f"no mutant named {name!r}; known: {', '.join(MUTANTS)}")
        return MUTANTS[name]
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise KillpointError(f"--engine wants module:factory, got {ref!r}")
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise KillpointError(f"cannot import engine module {module_name!r}: {exc}") from exc
    try:
        target = getattr(module, attr)
    except AttributeError:
        raise KillpointError(f"module {module_name!r} has no {attr!r}") from None
    if isinstance(target, EngineSpec):
        return target
    if not callable(target):
        raise KillpointError(f"{ref} is neither an EngineSpec nor a factory callable")
    reader: Callable[[World], HistoryReader] = getattr(target, "reader", None) or _no_history
    tamper: Any = getattr(target, "tamper", None)
    return EngineSpec(name=ref, factory=target, reader=reader, tamper=tamper)


def _no_history(world: World) -> HistoryReader:
    return NoHistory()
