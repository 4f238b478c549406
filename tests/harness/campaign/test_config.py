"""`CampaignConfig.of`: the one place a user's `CampaignOptions` become the config a campaign
runs, every option carried over and every default the campaign's own."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from killpoint.harness.campaign.execute import CampaignConfig
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.options import CampaignOptions, declared
from tests.support.options import sample


def test_of_sets_every_field_of_the_config_from_the_options_or_its_arguments(
    tmp_path: Path,
) -> None:
    """Every `CampaignConfig` field comes from an option or an argument of `of`, so an option
    added to the campaign cannot be left out of the model unnoticed."""
    changed = CampaignOptions().merged(
        {s.name: sample(s) for s in declared(CampaignOptions) if s.name not in ("engine", "jobs")}
    )

    def on_run(result: Any) -> None: ...

    def on_plan(total: int) -> None: ...

    config = CampaignConfig.of(changed, [], tmp_path, REFERENCE, on_run, on_plan)
    from_options = {
        "tier": changed.tier,
        "store_url": changed.db,
        "double": changed.double,
        "double_limit": changed.double_limit,
        "interleave": changed.interleave,
        "network": changed.network,
        "named": changed.named,
        "deploys": changed.deploys,
        "seed": changed.seed,
        "explore": changed.explore,
        "operators": changed.operators,
        "shard": changed.shard,
        "worker_timeout": changed.worker_timeout,
        "lies": changed.lies,
        "neighbours": changed.neighbours,
        "canaries": changed.canaries,
        "pauses": changed.pauses,
        "real_pass": changed.real_pass,
    }
    from_arguments = {
        "scenarios": [],
        "workdir": tmp_path,
        "engine": REFERENCE,
        "on_run": on_run,
        "on_plan": on_plan,
    }
    not_an_option = {"extra"}  # schedules a caller appends to the plan, not a user's option
    assert {f.name for f in dataclasses.fields(CampaignConfig)} == (
        from_options.keys() | from_arguments.keys() | not_an_option
    )
    for name, expected in (from_options | from_arguments).items():
        assert getattr(config, name) == expected, name
    defaults = CampaignConfig(scenarios=[], workdir=tmp_path, engine=REFERENCE)
    for name in from_options:
        assert getattr(config, name) != getattr(defaults, name), name


def test_the_defaults_are_the_campaigns_own() -> None:
    """One default per option, the main job's: `CampaignConfig`'s and every front's."""
    config = CampaignConfig.of(CampaignOptions(), [], Path("x"), REFERENCE)
    defaults = CampaignConfig(scenarios=[], workdir=Path("x"), engine=REFERENCE)
    assert dataclasses.asdict(config) == dataclasses.asdict(defaults)
