"""Finding the engine under test: the reference engine, a mutant, or a team's `module:factory`.

The target of `--engine module:attr` is either an `EngineSpec` (full control: factory, history
reader, tamper hook) or a plain factory callable `(env, scenario) -> engine`, which may carry
`reader`, `tamper`, `prepare` and `reset` attributes (see `killpoint.harness.protocol`). Without
a reader, the engine is judged on what the harness sees from outside (boundary hits at the
transport, service journals), and the checkers that need the engine's own records answer
unknown.

Whatever the engine, its spec names it by the reference it was loaded from (`EngineSpec.ref`),
which every fault schedule records, so `killpoint replay FILE` loads the same engine again.
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from killpoint.contract.errors import KillpointError
from killpoint.harness.catalogue import installed
from killpoint.harness.protocol import EngineSpec

REFERENCE_NAME = "reference"
# The frameworks killpoint adapts itself, each behind an extra: `--engine NAME[:VARIANT]`.
FRAMEWORKS = {
    "langgraph": "langgraph",
    "agent-framework": "agent_framework",
    "dbos": "dbos",
    "temporal": "temporal",
}


def load_engine(ref: str | None) -> EngineSpec:
    """`None` or "reference" for ours, `mutant:NAME` for a mutant of an installed catalogue,
    a framework's name (`langgraph`, `langgraph:naive`: see `FRAMEWORKS`), `cmd:COMMAND` or an
    engine file (`….toml`) for an engine that is a command (`engines.command`), otherwise
    import `module:attr` (the current folder is on the path, so a team's own module is found)."""
    if ref is None or ref == REFERENCE_NAME:
        from killpoint.harness.engines.reference import REFERENCE

        return REFERENCE
    if ref.startswith("mutant:"):
        return installed().mutant(ref.removeprefix("mutant:"))
    if ref.startswith("cmd:"):
        from killpoint.harness.engines.command import command_engine

        return command_engine(ref)
    if ref.endswith(".toml"):
        from killpoint.harness.engines.engine_file import file_engine

        return file_engine(ref)
    framework, _, variant = ref.partition(":")
    if framework in FRAMEWORKS:
        return framework_engine(framework, variant)
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise KillpointError(
            "--engine wants reference, mutant:NAME, cmd:COMMAND, an engine file (.toml) or "
            f"module:factory, got {ref!r}"
        )
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:  # a relative name is a TypeError, a team's module may raise anything as it loads
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise KillpointError(f"cannot import engine module {module_name!r}: {exc}") from exc
    except Exception as exc:
        raise KillpointError(
            f"cannot import engine module {module_name!r}: {type(exc).__name__}: {exc}"
        ) from exc
    try:
        target = getattr(module, attr)
    except AttributeError:
        raise KillpointError(f"module {module_name!r} has no {attr!r}") from None
    return as_spec(target, ref)


def framework_engine(framework: str, variant: str = "") -> EngineSpec:
    """A framework's adapter (`killpoint.harness.engines.<module>`), in one of its variants
    (its own default when none is named); a clear line when its extra is not installed."""
    module_name = f"killpoint.harness.engines.{FRAMEWORKS[framework]}"
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise KillpointError(
            f"--engine {framework} needs its extra: pip install 'killpoint[{framework}]' ({exc})"
        ) from exc
    spec: EngineSpec = module.spec(variant or module.DEFAULT_VARIANT)
    return spec


def as_spec(target: Any, ref: str | None = None) -> EngineSpec:
    """An `EngineSpec` from a spec or a factory callable (whose `reader`, `tamper`, `prepare` and
    `reset` attributes, if any, are its hooks); `ref` is how it can be loaded again."""
    if isinstance(target, EngineSpec):
        return target if ref is None or target.ref == ref else replace(target, ref=ref)
    if not callable(target):
        raise KillpointError(f"{ref or target!r} is neither an EngineSpec nor a factory callable")
    return EngineSpec(
        name=ref or str(getattr(target, "__qualname__", repr(target))),
        factory=target,
        reader=getattr(target, "reader", None),
        tamper=getattr(target, "tamper", None),
        prepare=getattr(target, "prepare", None),
        reset=getattr(target, "reset", None),
        ref=ref,
    )
