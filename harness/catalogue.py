"""Scenarios, mutant engines and service flags that installed packages bring to killpoint.

The harness never imports a scenario catalogue: a package registers one under the
`killpoint.catalogues` entry-point group, naming a `Catalogue` (or a function that returns
one), and the CLI and the pytest plugin find every registered catalogue here. killpoint's own
(`killpoint.scenarios:catalogue`) is one of them; a team's package can add its scenarios and its
broken engines the same way, and `killpoint run -s NAME` and `--engine mutant:NAME` find them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import TypeVar

from killpoint.contract.adapters import Capabilities
from killpoint.contract.errors import KillpointError
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.scenario import Scenario

GROUP = "killpoint.catalogues"
T = TypeVar("T")


@dataclass(frozen=True)
class Catalogue:
    """What one package brings: scenarios by name (with their named cases), mutant engines by
    name (each with the seed's mistake as its description), and the recovery flags of the
    services its adapters talk to (for `killpoint inspect`)."""

    scenarios: Mapping[str, Scenario] = field(default_factory=dict)
    mutants: Mapping[str, EngineSpec] = field(default_factory=dict)
    services: Mapping[str, Capabilities] = field(default_factory=dict)

    def scenario(self, name: str) -> Scenario:
        """The scenario called `name`; a `KillpointError` naming the known ones otherwise."""
        try:
            return self.scenarios[name]
        except KeyError:
            known = ", ".join(sorted(self.scenarios)) or "none (no catalogue is installed)"
            raise KillpointError(f"no scenario named {name!r}; known: {known}") from None

    def mutant(self, name: str) -> EngineSpec:
        try:
            return self.mutants[name]
        except KeyError:
            known = ", ".join(self.mutants) or "none"
            raise KillpointError(f"no mutant named {name!r}; known: {known}") from None


@cache
def installed() -> Catalogue:
    """Every registered catalogue, merged in the order their packages were found."""
    return gather(entry_points(group=GROUP))


def gather(points: Iterable[EntryPoint]) -> Catalogue:
    """The catalogues these entry points name, merged; a `KillpointError` naming the entry point
    for one that cannot be loaded or is no `Catalogue` of scenarios, mutants and services."""
    scenarios: dict[str, Scenario] = {}
    mutants: dict[str, EngineSpec] = {}
    services: dict[str, Capabilities] = {}
    for point in sorted(points, key=lambda p: (p.value, p.name)):
        catalogue = _load(point)
        scenarios.update(_table(point, "scenarios", catalogue.scenarios, Scenario))
        mutants.update(_table(point, "mutants", catalogue.mutants, EngineSpec))
        services.update(_table(point, "services", catalogue.services, object))  # a Protocol
    return Catalogue(scenarios, mutants, services)


def _table(point: EntryPoint, what: str, table: Mapping[str, T], kind: type) -> Mapping[str, T]:
    if not isinstance(table, Mapping) or not all(
        isinstance(name, str) and isinstance(item, kind) for name, item in table.items()
    ):
        raise KillpointError(
            f"entry point {point.name} = {point.value}: its catalogue's {what} are not a mapping "
            f"of names to {kind.__name__ if kind is not object else 'anything'}"
        )
    return table


def _load(point: EntryPoint) -> Catalogue:
    """A team's package may be broken in any way: whatever loading it raises is one line."""
    try:
        target: object = point.load()
        catalogue = target() if callable(target) and not isinstance(target, Catalogue) else target
    except Exception as exc:
        raise KillpointError(
            f"entry point {point.name} = {point.value} cannot be loaded: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(catalogue, Catalogue):
        raise KillpointError(f"entry point {point.name} = {point.value} is not a Catalogue")
    return catalogue
