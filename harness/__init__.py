"""killpoint: kill an agent's worker at every boundary, resume it, and prove it stayed safe.

The reference engine (`Engine`) is exported here with the few types a user needs to define a
workflow and run it; campaign, oracle and report machinery live in their own modules. Names are
imported on first use (PEP 562), so loading the pytest plugin — which every pytest run of a
project that installs killpoint does — does not import the engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.budget import BudgetLimits
    from harness.clock import Clock, FakeClock, SystemClock
    from harness.dispatcher import Engine, Outcome
    from harness.errors import (
        ConflictError,
        IntegrityError,
        KillpointError,
        LeaseHeldError,
        QuarantinedError,
        StaleFenceError,
    )
    from harness.integrity import SecretRef
    from harness.model import Checkpoint, EffectIntent, EffectStatus, Receipt, RunStatus, Versions
    from harness.store import Store
    from harness.workflow import Step, StepKind, Transition, Workflow

_HOMES = {
    "BudgetLimits": "harness.budget",
    "Checkpoint": "harness.model",
    "Clock": "harness.clock",
    "ConflictError": "harness.errors",
    "EffectIntent": "harness.model",
    "EffectStatus": "harness.model",
    "Engine": "harness.dispatcher",
    "FakeClock": "harness.clock",
    "IntegrityError": "harness.errors",
    "KillpointError": "harness.errors",
    "LeaseHeldError": "harness.errors",
    "Outcome": "harness.dispatcher",
    "QuarantinedError": "harness.errors",
    "Receipt": "harness.model",
    "RunStatus": "harness.model",
    "SecretRef": "harness.integrity",
    "StaleFenceError": "harness.errors",
    "Step": "harness.workflow",
    "StepKind": "harness.workflow",
    "Store": "harness.store",
    "SystemClock": "harness.clock",
    "Transition": "harness.workflow",
    "Versions": "harness.model",
    "Workflow": "harness.workflow",
}

__all__ = [
    "BudgetLimits",
    "Checkpoint",
    "Clock",
    "ConflictError",
    "EffectIntent",
    "EffectStatus",
    "Engine",
    "FakeClock",
    "IntegrityError",
    "KillpointError",
    "LeaseHeldError",
    "Outcome",
    "QuarantinedError",
    "Receipt",
    "RunStatus",
    "SecretRef",
    "StaleFenceError",
    "Step",
    "StepKind",
    "Store",
    "SystemClock",
    "Transition",
    "Versions",
    "Workflow",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
