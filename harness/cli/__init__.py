"""The `killpoint` command line: a thin layer over the harness and the reference engine.

One module per command: every public module of this package (a name without a leading `_`)
is imported when the package is, and registers its command on `app` (`from
killpoint.harness.cli._app import app`, then `@app.command()`), so nothing here needs editing.
The commands that drive the harness sit here; the operator's, which open the reference engine's
store (`control`, `queue`, `inspect`, `compact`), in `operator`.
A campaign command takes its campaign flags from `CampaignOptions` with `@with_options(front)`
(`_flags`); the operator tools share `DbOption`, `KeyEnvOption`, `open_store` and
`checkpoint_key` (`_shared`). Raise `KillpointError` for anything the user got wrong: the app
prints it as one line on stderr and exits with status 2, never with a traceback.
"""

from __future__ import annotations

import importlib
import pkgutil

from killpoint.harness.cli._app import USER_ERROR, app, fail, main
from killpoint.harness.cli._shared import (
    AtOption,
    DbOption,
    KeyEnvOption,
    checkpoint_key,
    known_services,
    open_store,
)

__all__ = [
    "USER_ERROR",
    "AtOption",
    "DbOption",
    "KeyEnvOption",
    "app",
    "checkpoint_key",
    "fail",
    "known_services",
    "main",
    "open_store",
]


def _load_commands() -> None:
    """Every public module of the package and of `operator` (the reference store's tools) is a
    command that registers itself on the app."""
    for module in pkgutil.walk_packages(__path__, f"{__name__}."):
        if not any(part.startswith("_") for part in module.name.split(".")):
            importlib.import_module(module.name)


_load_commands()
