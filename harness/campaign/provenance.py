"""What a campaign's result says about where it came from: killpoint's version, the engine's
package and version, the command line and the folder, so a report read days later, from a CI
artifact, names what produced it."""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, packages_distributions, version
from pathlib import Path

from killpoint.harness.engines.registry import installed_engines
from killpoint.harness.results import CampaignResult

OURS = "killpoint"


def killpoint_version() -> str | None:
    return _version(OURS)


def engine_version(ref: str | None) -> str | None:
    """`dist version` of the distribution that provides the engine `ref` names: killpoint's own
    for the reference engine and the mutants, the entry point's package for an installed
    engine, the top module's package for `module:factory`; None for a command engine, an
    engine handed over as an object, or a module no installed distribution provides."""
    if ref is None or ref == "reference" or ref.startswith("mutant:"):
        return _named(OURS)
    if ref.startswith("cmd:") or ref.endswith(".toml"):
        return None
    name = ref.partition(":")[0]
    point = installed_engines().get(name)
    if point is not None and point.dist is not None:
        return _named(point.dist.name)
    providers = packages_distributions().get(name.partition(".")[0], [])
    return _named(providers[0]) if providers else None


def _version(dist: str) -> str | None:
    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def _named(dist: str) -> str | None:
    found = _version(dist)
    return None if found is None else f"{dist} {found}"


def launched(argv: list[str]) -> list[str]:
    """The command line as a user typed it: the program by its name, not the path it was
    installed at (`killpoint`, `pytest`), which is this machine's."""
    return [Path(argv[0]).name, *argv[1:]] if argv else []


def stamped(result: CampaignResult, ref: str | None, folder: Path) -> CampaignResult:
    """`result` with its provenance: versions, the command line as launched, its folder."""
    return result.model_copy(
        update={
            "killpoint_version": killpoint_version(),
            "engine_version": engine_version(ref),
            "command": launched(sys.argv),
            "campaign_dir": str(folder),
        }
    )
