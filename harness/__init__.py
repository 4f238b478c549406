"""killpoint: kill an agent's worker at every boundary, resume it, and prove it stayed safe.

The reference engine (`Engine`) is exported here with the few types a user needs to define a
workflow and run it; campaign, oracle and report machinery live in their own modules.
"""

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
from harness.model import (
    Checkpoint,
    EffectIntent,
    EffectStatus,
    Receipt,
    RunStatus,
    Versions,
)
from harness.store import Store
from harness.workflow import Step, StepKind, Transition, Workflow

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
