"""How a mutant is built: the reference engine's spec with one part of its own in place."""

from __future__ import annotations

from dataclasses import replace

from killpoint.harness.engines.reference import REFERENCE, ReferenceEngine
from killpoint.harness.protocol import EngineSpec
from killpoint.reference.dispatcher import Engine
from killpoint.reference.lease import Fence
from killpoint.reference.ledger import EffectExecutor
from killpoint.reference.steps import Steps
from killpoint.reference.store import CheckpointLog

__all__ = ["mutant"]


def mutant(
    name: str,
    doc: str,
    *,
    engine: type[Engine] = Engine,
    kinds: type[Steps] = Steps,
    executor: type[EffectExecutor] | None = None,
    fence: Fence | None = None,
    log: CheckpointLog | None = None,
    workers: type[ReferenceEngine] = ReferenceEngine,
) -> EngineSpec:
    """The reference engine's spec (reader, tamper hook and all) with this mutant's workers:
    the reference's, with the parts given here in place of its own."""
    if executor is not None:
        kinds = type(executor.__name__, (kinds,), {"executor": executor})
    parts = {"engine_class": engine, "steps_class": kinds, "fence": fence, "log": log}
    title = "".join(word.title() for word in name.split("_"))
    factory: type[ReferenceEngine] = type(f"Mutant{title}", (workers,), {**parts, "__doc__": doc})
    return replace(REFERENCE, name=name, factory=factory, ref=f"mutant:{name}", description=doc)
