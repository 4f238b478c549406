"""Mutant hunts for `run --mutants` and `mutants`: each engine hunted with the campaign's plan
and options, spread over `--jobs` processes."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated

import typer

from killpoint.contract.errors import KillpointError
from killpoint.harness.campaign import hunt, jobs
from killpoint.harness.cli._progress import Progress
from killpoint.harness.options import CampaignOptions
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import MutantResult
from killpoint.harness.scenario import Scenario

# (name, engine, why it is hunted)
Target = tuple[str, EngineSpec, str]
MutantOption = Annotated[
    list[str] | None,
    typer.Option(
        "--mutant",
        "-m",
        metavar="NAME",
        help="Mutant to hunt (repeatable; default all).",
        show_default=False,
    ),
]


def chosen_mutants(names: Sequence[str] | None) -> dict[str, EngineSpec]:
    """The installed mutants asked for by name (all when none is), checked before any work."""
    from killpoint.harness.catalogue import installed

    catalogue = installed().mutants
    unknown = [name for name in names or () if name not in catalogue]
    if unknown:
        raise KillpointError(
            f"no mutant named {', '.join(map(repr, unknown))}; known: {', '.join(catalogue)}"
        )
    return {n: catalogue[n] for n in names} if names else dict(catalogue)


def folder_name(name: str) -> str:
    """A hunt's folder for an engine's name: one path part, whatever the name holds (a
    command line has slashes and spaces), still recognisable."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")[:80] or "engine"


def hunt_outcomes(
    targets: Sequence[Target],
    scenarios: Sequence[Scenario],
    root: Path,
    options: CampaignOptions,
    progress: Progress,
) -> list[hunt.HuntOutcome]:
    """Each target hunted in a world of its own under `root`, until the oracle catches it."""

    def one(name: str, spec: EngineSpec, why: str) -> Callable[[], hunt.HuntOutcome]:
        folder = root / folder_name(name)
        return lambda: hunt.hunt_outcome(spec, scenarios, folder, options, description=why)

    progress.hunting(len(targets))
    return jobs.hunts_in_processes(
        [one(*target) for target in targets],
        options.jobs,
        lambda outcome: progress.hunted(outcome.result.caught),
    )


def mutation_score(
    mutants: dict[str, EngineSpec],
    scenarios: Sequence[Scenario],
    root: Path,
    options: CampaignOptions,
    progress: Progress,
) -> list[MutantResult]:
    """Each mutant hunted (`chosen_mutants`); only their results cross processes."""

    def one(name: str, spec: EngineSpec) -> Callable[[], MutantResult]:
        folder = root / name
        return lambda: (
            hunt.hunt_outcome(spec, scenarios, folder, options, description=spec.description).result
        )

    progress.hunting(len(mutants))
    return jobs.hunts_in_processes(
        [one(n, s) for n, s in mutants.items()],
        options.jobs,
        lambda result: progress.hunted(result.caught),
    )
