"""What a step sees: validated input, earlier outputs, artifacts and effect receipts.

Steps get facts from the checkpoint and the ledger, never from a transcript, so a step that runs
again after a crash sees exactly what its first run saw.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

from pydantic import JsonValue

from killpoint.contract.artifacts import ArtifactStore
from killpoint.contract.boundaries import BoundaryHook
from killpoint.contract.errors import ArtifactError
from killpoint.contract.records import ArtifactRef, EffectRecord


class LazyEffects(Sequence[EffectRecord]):
    """The ledger's rows, read from the store on first use: most steps never look at them."""

    def __init__(self, load: Callable[[], Iterable[EffectRecord]]) -> None:
        self._load = load
        self._rows: tuple[EffectRecord, ...] | None = None

    def _all(self) -> tuple[EffectRecord, ...]:
        if self._rows is None:
            self._rows = tuple(self._load())
        return self._rows

    @overload
    def __getitem__(self, index: int) -> EffectRecord: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[EffectRecord]: ...

    def __getitem__(self, index: int | slice) -> EffectRecord | Sequence[EffectRecord]:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())


@dataclass(frozen=True)
class StepContext:
    workflow_id: str
    step: str
    input: Mapping[str, JsonValue]
    outputs: Mapping[str, JsonValue]
    artifact_refs: Mapping[str, ArtifactRef]
    effects: Sequence[EffectRecord]
    store: ArtifactStore
    hook: BoundaryHook
    now: float

    def artifact(self, step: str) -> bytes:
        """The artifact a step produced, re-hashed on read."""
        ref = self.artifact_refs.get(step)
        if ref is None:
            raise ArtifactError(f"step {step!r} has no artifact in this checkpoint")
        return self.store.get(ref.sha256)

    def effects_of(self, step: str) -> tuple[EffectRecord, ...]:
        return tuple(e for e in self.effects if e.step == step)

    def boundary(self, name: str) -> None:
        """Let a step declare a boundary of its own (a handoff, say)."""
        self.hook(name, self.step)
