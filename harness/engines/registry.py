"""Finding the engine under test: the reference engine, a mutant, an installed engine, or a team's
`module:factory`.

An installed engine registers under the `killpoint.engines` entry-point group, as scenario
catalogues do under `killpoint.catalogues`: `--engine NAME[:VARIANT]` finds it by the entry
point's name. killpoint's own framework adapters (`langgraph`, `agent-framework`, `dbos`,
`temporal`) are registered the same way in its `pyproject.toml`; a team's package adds its own
with one module and one entry point (docs/frameworks.md, "Your framework as a plug-in").

The object an entry point (or `--engine module:attr`) names is an `EngineSpec` (full control:
factory, history reader, tamper hook), a plain factory callable `(env, scenario) -> engine`,
which may carry `reader`, `tamper`, `prepare` and `reset` attributes (see
`killpoint.harness.protocol`), or, for an entry point, a spec function `(variant) -> EngineSpec`
of at most one parameter (`engines.spec.framework_spec` builds one), called with the variant
`NAME:VARIANT` names (with none when none is named). Without a reader, the engine is judged on
what the harness sees from outside (boundary hits at the transport, service journals), and the
checkers that need the engine's own records answer unknown.

Whatever the engine, its spec names it by the reference it was loaded from (`EngineSpec.ref`),
which every fault schedule records, so `killpoint replay FILE` loads the same engine again.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from killpoint.contract.errors import KillpointError
from killpoint.harness.catalogue import installed
from killpoint.harness.protocol import EngineSpec

GROUP = "killpoint.engines"
REFERENCE_NAME = "reference"
OWN = "killpoint"  # the distribution whose entry points are killpoint's own adapters
FORMS = "mutant:NAME, cmd:COMMAND, an engine file (.toml) or module:factory"
ENGINE = "an EngineSpec, a factory (env, scenario) or a spec function (variant)"


def load_engine(ref: str | None) -> EngineSpec:
    """`None` or "reference" for ours, `mutant:NAME` for a mutant of an installed catalogue,
    an installed engine's name (`langgraph`, `langgraph:naive`: see `installed_engines`),
    `cmd:COMMAND` or an engine file (`….toml`) for an engine that is a command
    (`engines.command`), otherwise import `module:attr` (the current folder is on the path, so a
    team's own module is found)."""
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
    name, _, variant = ref.partition(":")
    points = installed_engines()
    if name in points:
        return plugin_engine(points[name], variant)
    if not name or not variant:
        raise KillpointError(f"no engine named {ref!r}; {known_engines(points)}")
    return _imported(name, variant, ref)


@cache
def installed_engines() -> Mapping[str, EntryPoint]:
    """The engines installed packages register (`killpoint.engines`), by entry-point name; of
    two with one name, the first found."""
    found: dict[str, EntryPoint] = {}
    for point in entry_points(group=GROUP):
        found.setdefault(point.name, point)
    return found


def known_engines(points: Mapping[str, EntryPoint]) -> str:
    """What `--engine` takes, for a user who named something else."""
    names = ", ".join([REFERENCE_NAME, *sorted(points)])
    said = f"known: {names} (or {FORMS})"
    if not any(_is_own(point) for point in points.values()):
        said += (
            f"; killpoint's own framework adapters are not among them: its install predates the "
            f"{GROUP} entry points (install it again; in a checkout, remove a stale "
            "killpoint.egg-info and pip install -e .)"
        )
    return said


def framework_engine(framework: str, variant: str = "") -> EngineSpec:
    """An installed engine by its entry-point name, in one of its variants (its own default
    when none is named); a clear line when its extra is not installed."""
    points = installed_engines()
    if framework not in points:
        raise KillpointError(f"no engine named {framework!r}; {known_engines(points)}")
    return plugin_engine(points[framework], variant)


def plugin_engine(point: EntryPoint, variant: str = "") -> EngineSpec:
    """The engine an entry point names, in `variant`; whatever loading a package raises is one
    `KillpointError` line naming the entry point and its package (for killpoint's own adapters,
    a missing extra names the `pip install` to run)."""
    try:
        target: object = point.load()
    except ImportError as exc:
        if _is_own(point):
            raise KillpointError(
                f"--engine {point.name} needs its extra: pip install 'killpoint[{point.name}]' "
                f"({exc})"
            ) from exc
        raise KillpointError(f"{_where(point)} cannot be loaded: {_said(exc)}") from exc
    except Exception as exc:
        raise KillpointError(f"{_where(point)} cannot be loaded: {_said(exc)}") from exc
    if _takes_a_variant(target):
        return _specified(point, target, variant)
    if not isinstance(target, EngineSpec) and not callable(target):
        raise KillpointError(f"{_where(point)} is not an engine: {ENGINE}, got {_kind(target)}")
    if variant:
        raise KillpointError(f"--engine {point.name} has no variants, got {variant!r}")
    return as_spec(target, point.name)


def _specified(point: EntryPoint, target: Any, variant: str) -> EngineSpec:
    """What a spec function makes of the variant; a variant it refuses is its own user error."""
    try:
        spec = target(variant) if variant else target()
    except KillpointError:
        raise
    except Exception as exc:
        raise KillpointError(f"{_where(point)} failed to make its spec: {_said(exc)}") from exc
    if not isinstance(spec, EngineSpec):
        raise KillpointError(f"{_where(point)} is not an engine: {ENGINE}, got {_kind(spec)}")
    if spec.ref is None or spec.ref.partition(":")[0] != point.name:
        return replace(spec, ref=f"{point.name}:{variant}" if variant else point.name)
    return spec


def _takes_a_variant(target: object) -> bool:
    """A spec function `(variant) -> EngineSpec` takes at most one positional parameter, a
    factory `(env, scenario) -> engine` (a function or an engine class) two."""
    if isinstance(target, type | EngineSpec) or not callable(target):
        return False
    try:
        parameters = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):  # a callable whose signature Python cannot read
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return sum(p.kind in positional for p in parameters) <= 1 and not any(
        p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters
    )


def _is_own(point: EntryPoint) -> bool:
    return point.dist is not None and point.dist.name == OWN


def _where(point: EntryPoint) -> str:
    dist = point.dist
    package = "an unknown package" if dist is None else f"package {dist.name} {dist.version}"
    return f"--engine {point.name}: entry point {point.name} = {point.value} of {package}"


def _said(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _kind(target: object) -> str:
    return f"a module ({target.__name__})" if inspect.ismodule(target) else type(target).__name__


def _imported(module_name: str, attr: str, ref: str) -> EngineSpec:
    """`module:attr`, imported from the current folder (a team's own module) or the path."""
    if str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:  # a relative name is a TypeError, a team's module may raise anything as it loads
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise KillpointError(
            f"cannot import engine module {module_name!r}: {exc}; "
            f"{known_engines(installed_engines())}"
        ) from exc
    except Exception as exc:
        raise KillpointError(f"cannot import engine module {module_name!r}: {_said(exc)}") from exc
    try:
        target = getattr(module, attr)
    except AttributeError:
        raise KillpointError(f"module {module_name!r} has no {attr!r}") from None
    return as_spec(target, ref)


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
