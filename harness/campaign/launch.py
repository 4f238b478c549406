"""Starting a campaign from what a user names: scenarios, an engine, `CampaignOptions`.

`killpoint run`, the pytest plugin and `killpoint.run_campaign` all start their campaigns with
one call, `start`: the options become the `CampaignConfig` (`CampaignConfig.of`) and the
campaign runs in `options.jobs` processes (`jobs`). Each front door only resolves what its user
named: scenarios are catalogue names or `Scenario` objects, an engine is a reference
(`reference`, `mutant:NAME`, `module:factory`), an `EngineSpec` or a factory.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from killpoint.harness.campaign import jobs
from killpoint.harness.campaign.execute import CampaignConfig
from killpoint.harness.campaign.provenance import stamped
from killpoint.harness.catalogue import installed
from killpoint.harness.engines.registry import as_spec, load_engine
from killpoint.harness.options import CampaignOptions
from killpoint.harness.protocol import EngineSpec
from killpoint.harness.results import CampaignResult, RunResult
from killpoint.harness.scenario import Scenario


def resolve_scenarios(given: str | Scenario | Iterable[str | Scenario] | None) -> list[Scenario]:
    """The scenarios named (catalogue names or `Scenario` objects), in the order given."""
    items = [given] if isinstance(given, str | Scenario) else list(given or ())
    chosen: list[Scenario] = []
    for item in items:
        if isinstance(item, Scenario):
            chosen.append(item)
        elif isinstance(item, str):
            chosen.append(installed().scenario(item))
        else:
            raise TypeError(f"a killpoint scenario is a name or a Scenario, not {item!r}")
    return chosen


def every_scenario(
    given: Iterable[str | Scenario], engine: EngineSpec | None = None
) -> list[Scenario]:
    """The scenarios named, or those the engine implements (`EngineSpec.scenarios`: a
    command engine's own business logic), or every installed one."""
    return resolve_scenarios(list(given) or list(engine.scenarios if engine else ())) or list(
        installed().scenarios.values()
    )


def resolve_engine(ref: Any) -> EngineSpec:
    """The engine under test from a reference, an `EngineSpec` or a factory callable."""
    if isinstance(ref, str) or ref is None:
        return load_engine(ref)
    if isinstance(ref, EngineSpec) or callable(ref):
        return as_spec(ref)
    raise TypeError(f"a killpoint engine is 'module:factory', an EngineSpec or a factory: {ref!r}")


def start(
    scenarios: Sequence[Scenario],
    engine: EngineSpec,
    options: CampaignOptions,
    workdir: Path,
    *,
    on_run: Callable[[RunResult], None] | None = None,
    on_plan: Callable[[int], None] | None = None,
) -> CampaignResult:
    """The one call that starts a campaign: `options` over `scenarios` against `engine`, in
    `workdir`, sharded over `options.jobs` processes; its progress told to `on_run` and
    `on_plan` in this process; the result names its provenance (`provenance.stamped`)."""
    config = CampaignConfig.of(options, scenarios, workdir, engine, on_run, on_plan)
    return stamped(jobs.run_campaign(config, options.jobs), engine.ref, workdir)


def run_campaign(
    *scenarios: str | Scenario,
    engine: str | EngineSpec | Callable[..., Any] | None = None,
    workdir: str | Path | None = None,
    on_run: Callable[[RunResult], None] | None = None,
    **options: Any,
) -> CampaignResult:
    """Crash every boundary of each scenario (every installed one when none is named), recover,
    and judge each run; `options` are `CampaignOptions` fields (`double=False`, `jobs=2`, …).

        result = killpoint.run_campaign("order_saga", engine="my_engine:factory", network=False)
        assert not result.violations, result.violations[0].schedule_file

    Stores, artifacts and the schedule of each violating run go under `workdir` (a new
    temporary folder by default), so `killpoint replay FILE` re-runs a violation when the
    engine was named by reference.
    """
    ref = engine if isinstance(engine, str) else None
    chosen = CampaignOptions().merged({"engine": ref, **options})
    folder = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="killpoint-"))
    spec = resolve_engine(engine)
    named = every_scenario(scenarios or chosen.scenarios, spec)  # positional, or scenarios=(…)
    return start(named, spec, chosen, folder, on_run=on_run)
