"""killpoint's reference engine: checkpoints, an effect ledger, leases with fencing, budgets.

The engine the seeds describe, built to be copied: a deterministic dispatcher (`Engine`, with
its `Settings`) that folds each step into the next sealed, versioned `Checkpoint` (`fold`), the
kinds of step it runs (`Steps`), a write-ahead effect ledger, durable budgets, and a store
(`Store`, SQLite or PostgreSQL) whose every write passes its `Fence`. `Steps`, `Fence` and
`CheckpointLog` are the seams a broken engine overrides, one method at a time. It knows nothing
of the harness: it is driven through the harness's engine protocol by one adapter
(`killpoint.harness.engines.reference`), as any other engine is. It speaks the shared
vocabulary of `killpoint.contract`.

Names are imported on first use (PEP 562), so importing one module of the engine does not
import all of it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if __name__ != "killpoint.reference":  # a checkout's folder, imported by its bare name
    raise ImportError(
        "import killpoint.reference, not reference: the folder installs under killpoint, "
        "and a second name would load a second copy of every module"
    )

if TYPE_CHECKING:
    from killpoint.reference._backends import resolve_url
    from killpoint.reference.audit import AuditRecord, audit_trail
    from killpoint.reference.checkpoint import Checkpoint
    from killpoint.reference.controls import ControlRefused, Controls
    from killpoint.reference.dispatcher import Engine
    from killpoint.reference.errors import (
        ConflictError,
        IntegrityError,
        LeaseHeldError,
        QuarantinedError,
        StaleFenceError,
    )
    from killpoint.reference.fold import Change, fold
    from killpoint.reference.integrity import SecretRef
    from killpoint.reference.lease import Fence
    from killpoint.reference.operator_queue import QueueEntry, operator_queue
    from killpoint.reference.settings import Settings
    from killpoint.reference.steps import Steps
    from killpoint.reference.store import CheckpointLog, Store

_HOMES = {
    "AuditRecord": "killpoint.reference.audit",
    "ControlRefused": "killpoint.reference.controls",
    "Controls": "killpoint.reference.controls",
    "QueueEntry": "killpoint.reference.operator_queue",
    "audit_trail": "killpoint.reference.audit",
    "operator_queue": "killpoint.reference.operator_queue",
    "Change": "killpoint.reference.fold",
    "Checkpoint": "killpoint.reference.checkpoint",
    "CheckpointLog": "killpoint.reference.store",
    "ConflictError": "killpoint.reference.errors",
    "Engine": "killpoint.reference.dispatcher",
    "Fence": "killpoint.reference.lease",
    "IntegrityError": "killpoint.reference.errors",
    "LeaseHeldError": "killpoint.reference.errors",
    "QuarantinedError": "killpoint.reference.errors",
    "SecretRef": "killpoint.reference.integrity",
    "Settings": "killpoint.reference.settings",
    "StaleFenceError": "killpoint.reference.errors",
    "Steps": "killpoint.reference.steps",
    "Store": "killpoint.reference.store",
    "fold": "killpoint.reference.fold",
    "resolve_url": "killpoint.reference.store",  # the store's URL rule, for tools
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
        raise AttributeError(f"module 'killpoint.reference' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
