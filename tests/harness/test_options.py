"""The one options model: its fields, what it accepts and refuses, the `CampaignConfig` it
builds, and a module light enough for the pytest plugin to read when pytest loads."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from killpoint.harness.campaign.execute import CampaignConfig
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.options import (
    OPTIONS,
    CampaignOptions,
    OptionError,
    SessionOptions,
    declared,
)
from tests.support.options import sample


def test_every_field_is_declared_with_help_and_a_front() -> None:
    for model in (CampaignOptions, SessionOptions):
        specs = declared(model)
        assert [s.name for s in specs] == [f.name for f in dataclasses.fields(model)]
        for spec in specs:
            assert spec.help and spec.fronts, spec.name


@pytest.mark.parametrize("name", list(OPTIONS))
def test_each_option_reads_its_text_form(name: str) -> None:
    spec = OPTIONS[name]
    value = getattr(CampaignOptions().merged({name: sample(spec)}), name)
    assert value != spec.default
    assert getattr(CampaignOptions().merged({name: value}), name) == value  # typed: kept as is


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("tier", "cloud", "wants one of inprocess, real, got 'cloud'"),
        ("double", "maybe", "wants true or false, got 'maybe'"),
        ("double_limit", "-1", "-1: at least 0"),
        ("double_limit", True, "wants a whole number, got True"),
        ("shard", "3/2", "3/2: i must be between 1 and N"),
        ("shard", "half", "wants i/N (e.g. 1/4), got 'half'"),
        ("jobs", "many", "wants a number or 'auto', got 'many'"),
        ("jobs", "0", "0: at least one process is needed"),
        ("scenarios", [1], "wants names, got [1]"),
    ],
)
def test_a_bad_value_names_its_option_and_what_it_wants(
    name: str, value: object, message: str
) -> None:
    with pytest.raises(OptionError) as caught:
        CampaignOptions().merged({name: value})
    assert (caught.value.name, caught.value.message) == (name, message)


def test_auto_jobs_is_one_process_per_core() -> None:
    assert CampaignOptions(jobs="auto").jobs >= 1  # type: ignore[arg-type]


def test_an_option_a_front_does_not_offer_is_refused_with_what_it_takes() -> None:
    with pytest.raises(OptionError) as caught:
        CampaignOptions().merged({"jobs": 2}, "marker")
    assert caught.value.name == "jobs"
    assert "known: engine, tier, double, double_limit" in caught.value.message
    assert "jobs" not in caught.value.message.partition("known:")[2]


def test_config_sets_every_field_of_the_campaign_config(tmp_path: Path) -> None:
    """Every `CampaignConfig` field comes from an option or an argument of `config`, so an
    option added to the campaign cannot be left out of the model unnoticed."""
    changed = CampaignOptions().merged(
        {s.name: sample(s) for s in declared(CampaignOptions) if s.name not in ("engine", "jobs")}
    )

    def on_run(result: Any) -> None: ...

    def on_plan(total: int) -> None: ...

    config = changed.config([], tmp_path, REFERENCE, on_run, on_plan)
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
    config = CampaignOptions().config([], Path("x"), REFERENCE)
    defaults = CampaignConfig(scenarios=[], workdir=Path("x"), engine=REFERENCE)
    assert dataclasses.asdict(config) == dataclasses.asdict(defaults)


def test_a_hunt_takes_the_shared_phases() -> None:
    options = CampaignOptions(seed=3, double=False, double_limit=9, interleave=False)
    assert options.hunt() == {
        "seed": 3,
        "double": False,
        "double_limit": 9,
        "interleave": False,
        "network": True,
        "explore": "60",
        "lies": True,
        "neighbours": True,
        "operators": True,
        "canaries": True,
        "pauses": True,
        "real_pass": True,
    }


def test_the_model_imports_only_the_standard_library() -> None:
    code = (
        "import sys, json\nbefore = set(sys.modules)\nimport killpoint.harness.options\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(out.stdout)
    ours = {m for m in loaded if m.split(".")[0] == "killpoint"}
    assert ours == {"killpoint", "killpoint.harness", "killpoint.harness.options"}
    third_party = [m for m in loaded if m.split(".")[0] in ("pydantic", "typer", "sqlalchemy")]
    assert third_party == []
