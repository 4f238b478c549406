"""Scenarios, mutant engines and service flags that installed packages bring to killpoint.

The harness never imports a scenario catalogue: a package registers one under the
`killpoint.catalogues` entry-point group, naming a `Catalogue` (or a function that returns
one), and the CLI and the pytest plugin find every registered catalogue here. killpoint's own
(`killpoint.scenarios:catalogue`) is one of them; a team's package can add its scenarios and its
broken engines the same way, and `killpoint run -s NAME` and `--engine mutant:NAME` find them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points

from killpoint.harness.contract.adapters import Capabilities
from killpoint.harness.contract.errors import KillpointError
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.scenario import Scenario

GROUP = "killpoint.catalogues"


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
    scenarios: dict[str, Scenario] = {}
    mutants: dict[str, EngineSpec] = {}
    services: dict[str, Capabilities] = {}
    for point in sorted(entry_points(group=GROUP), key=lambda p: (p.value, p.name)):
        target: Catalogue | Callable[[], Catalogue] = point.load()
        catalogue = target if isinstance(target, Catalogue) else target()
        if not isinstance(catalogue, Catalogue):
            raise KillpointError(f"entry point {point.name} = {point.value} is not a Catalogue")
        scenarios.update(catalogue.scenarios)
        mutants.update(catalogue.mutants)
        services.update(catalogue.services)
    return Catalogue(scenarios, mutants, services)
