"""killpoint's reference engine: checkpoints, an effect ledger, leases with fencing, budgets.

The engine the seeds describe, built to be copied: a deterministic dispatcher (`Engine`, with
its `Settings`) that folds each step into the next sealed, versioned `Checkpoint` (`fold`), the
kinds of step it runs (`Steps`), a write-ahead effect ledger, durable budgets, and a store
(`Store`, SQLite or PostgreSQL) whose every write passes its `Fence`. `Steps`, `Fence` and
`CheckpointLog` are the seams a broken engine overrides, one method at a time. It knows nothing
of the harness: it is driven through the harness's engine protocol by one adapter
(`killpoint.harness.engines.reference`), as any other engine is. It speaks the shared
vocabulary of `killpoint.harness.contract`.

Names are imported on first use (PEP 562), so importing one module of the engine does not
import all of it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from killpoint.harness.engine._backends import resolve_url
    from killpoint.harness.engine.audit import AuditRecord, audit_trail
    from killpoint.harness.engine.controls import ControlRefused, Controls
    from killpoint.harness.engine.dispatcher import Engine
    from killpoint.harness.engine.errors import (
        ConflictError,
        IntegrityError,
        LeaseHeldError,
        QuarantinedError,
        StaleFenceError,
    )
    from killpoint.harness.engine.fence import Fence
    from killpoint.harness.engine.fold import Change, fold
    from killpoint.harness.engine.integrity import SecretRef
    from killpoint.harness.engine.model import Checkpoint
    from killpoint.harness.engine.operator_queue import QueueEntry, operator_queue
    from killpoint.harness.engine.settings import Settings
    from killpoint.harness.engine.steps import Steps
    from killpoint.harness.engine.store import CheckpointLog, Store

_HOMES = {
    "AuditRecord": "killpoint.harness.engine.audit",
    "ControlRefused": "killpoint.harness.engine.controls",
    "Controls": "killpoint.harness.engine.controls",
    "QueueEntry": "killpoint.harness.engine.operator_queue",
    "audit_trail": "killpoint.harness.engine.audit",
    "operator_queue": "killpoint.harness.engine.operator_queue",
    "Change": "killpoint.harness.engine.fold",
    "Checkpoint": "killpoint.harness.engine.model",
    "CheckpointLog": "killpoint.harness.engine.store",
    "ConflictError": "killpoint.harness.engine.errors",
    "Engine": "killpoint.harness.engine.dispatcher",
    "Fence": "killpoint.harness.engine.fence",
    "IntegrityError": "killpoint.harness.engine.errors",
    "LeaseHeldError": "killpoint.harness.engine.errors",
    "QuarantinedError": "killpoint.harness.engine.errors",
    "SecretRef": "killpoint.harness.engine.integrity",
    "Settings": "killpoint.harness.engine.settings",
    "StaleFenceError": "killpoint.harness.engine.errors",
    "Steps": "killpoint.harness.engine.steps",
    "Store": "killpoint.harness.engine.store",
    "fold": "killpoint.harness.engine.fold",
    "resolve_url": "killpoint.harness.engine.store",  # the store's URL rule, for tools
}

__all__ = [
    "AuditRecord",
    "Change",
    "Checkpoint",
    "CheckpointLog",
    "ConflictError",
    "ControlRefused",
    "Controls",
    "Engine",
    "Fence",
    "IntegrityError",
    "LeaseHeldError",
    "QuarantinedError",
    "QueueEntry",
    "SecretRef",
    "Settings",
    "StaleFenceError",
    "Steps",
    "Store",
    "audit_trail",
    "fold",
    "operator_queue",
    "resolve_url",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'killpoint.harness.engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
