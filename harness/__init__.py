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
    from killpoint.harness.budget import BudgetLimits
    from killpoint.harness.clock import Clock, FakeClock, SystemClock
    from killpoint.harness.dispatcher import Engine, Outcome
    from killpoint.harness.errors import (
        ConflictError,
        IntegrityError,
        KillpointError,
        LeaseHeldError,
        QuarantinedError,
        StaleFenceError,
    )
    from killpoint.harness.integrity import SecretRef
    from killpoint.harness.model import (
        Checkpoint,
        EffectIntent,
        EffectStatus,
        Receipt,
        RunStatus,
        Versions,
    )
    from killpoint.harness.store import Store
    from killpoint.harness.workflow import Step, StepKind, Transition, Workflow

_HOMES = {
    "BudgetLimits": "killpoint.harness.budget",
    "Checkpoint": "killpoint.harness.model",
    "Clock": "killpoint.harness.clock",
    "ConflictError": "killpoint.harness.errors",
    "EffectIntent": "killpoint.harness.model",
    "EffectStatus": "killpoint.harness.model",
    "Engine": "killpoint.harness.dispatcher",
    "FakeClock": "killpoint.harness.clock",
    "IntegrityError": "killpoint.harness.errors",
    "KillpointError": "killpoint.harness.errors",
    "LeaseHeldError": "killpoint.harness.errors",
    "Outcome": "killpoint.harness.dispatcher",
    "QuarantinedError": "killpoint.harness.errors",
    "Receipt": "killpoint.harness.model",
    "RunStatus": "killpoint.harness.model",
    "SecretRef": "killpoint.harness.integrity",
    "StaleFenceError": "killpoint.harness.errors",
    "Step": "killpoint.harness.workflow",
    "StepKind": "killpoint.harness.workflow",
    "Store": "killpoint.harness.store",
    "SystemClock": "killpoint.harness.clock",
    "Transition": "killpoint.harness.workflow",
    "Versions": "killpoint.harness.model",
    "Workflow": "killpoint.harness.workflow",
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
        raise AttributeError(f"module 'killpoint.harness' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
