"""killpoint's reference engine: checkpoints, an effect ledger, leases with fencing, budgets.

The engine the seeds describe, built to be copied: a deterministic dispatcher (`Engine`) over a
fenced store (`Store`, SQLite or PostgreSQL), sealed and versioned checkpoints (`Checkpoint`), a
write-ahead effect ledger and durable budgets. It knows nothing of the harness: it is driven
through the harness's engine protocol by one adapter (`killpoint.harness.engines.reference`),
as any other engine is. It speaks the shared vocabulary of `killpoint.harness.contract`.

Names are imported on first use (PEP 562), so importing one module of the engine does not
import all of it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from killpoint.harness.engine._backends import resolve_url
    from killpoint.harness.engine.dispatcher import Engine
    from killpoint.harness.engine.errors import (
        ConflictError,
        IntegrityError,
        LeaseHeldError,
        QuarantinedError,
        StaleFenceError,
    )
    from killpoint.harness.engine.integrity import SecretRef
    from killpoint.harness.engine.model import Checkpoint
    from killpoint.harness.engine.store import Store

_HOMES = {
    "Checkpoint": "killpoint.harness.engine.model",
    "ConflictError": "killpoint.harness.engine.errors",
    "Engine": "killpoint.harness.engine.dispatcher",
    "IntegrityError": "killpoint.harness.engine.errors",
    "LeaseHeldError": "killpoint.harness.engine.errors",
    "QuarantinedError": "killpoint.harness.engine.errors",
    "SecretRef": "killpoint.harness.engine.integrity",
    "StaleFenceError": "killpoint.harness.engine.errors",
    "Store": "killpoint.harness.engine.store",
    "resolve_url": "killpoint.harness.engine._backends",  # the store's URL rule, for tools
}

__all__ = [
    "Checkpoint",
    "ConflictError",
    "Engine",
    "IntegrityError",
    "LeaseHeldError",
    "QuarantinedError",
    "SecretRef",
    "StaleFenceError",
    "Store",
    "resolve_url",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'killpoint.harness.engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value
