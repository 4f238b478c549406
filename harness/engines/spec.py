"""One engine's spec as `--engine NAME[:VARIANT]` loads it: what every adapter's `spec` shares.

An adapter — killpoint's own or a team's plug-in (docs/frameworks.md) — writes its worker and its
hooks; `framework_spec` names the spec by the reference that loads it again (`NAME:VARIANT`,
recorded in every fault schedule so `killpoint replay` rebuilds the same engine), refuses a
variant the engine does not have with a user error naming the ones it has, and fills the rest of
the `EngineSpec`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from killpoint.contract.errors import KillpointError
from killpoint.harness.protocol import (
    EngineFactory,
    EngineSpec,
    KeepHook,
    PrepareHook,
    ReaderFactory,
    ResetHook,
    TamperHook,
)


def framework_spec(
    framework: str,
    factory: EngineFactory,
    variant: str = "",
    *,
    variants: Sequence[str] = (),
    description: str = "",
    lacks: Iterable[str] = (),
    reader: ReaderFactory | None = None,
    tamper: TamperHook | None = None,
    prepare: PrepareHook | None = None,
    reset: ResetHook | None = None,
    keep: KeepHook | None = None,
    name: str | None = None,
    scenarios: Sequence[str] = (),
    own_process: bool = False,
) -> EngineSpec:
    """The spec of `framework` in `variant` (one of `variants`; none for an engine without
    variants): `factory` builds a worker `(env, scenario)`, `reader` the history reader
    `(store, scenario)`, the hooks as `EngineSpec` says. Its `ref` and, unless `name` says
    otherwise, its name are `framework:variant` (`framework` alone without a variant)."""
    if variant and not variants:
        raise KillpointError(f"{framework} has no variants, got {variant!r}")
    if variants and variant not in variants:
        raise KillpointError(
            f"{framework} has no variant {variant!r}: choose one of {', '.join(variants)}"
        )
    ref = f"{framework}:{variant}" if variant else framework
    return EngineSpec(
        name=name or ref,
        factory=factory,
        reader=reader,
        tamper=tamper,
        prepare=prepare,
        reset=reset,
        keep=keep,
        ref=ref,
        description=description,
        lacks=frozenset(lacks),
        scenarios=tuple(scenarios),
        own_process=own_process,
    )
