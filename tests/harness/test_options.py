"""The one options model: its fields, what it accepts and refuses, and a module light enough
for the pytest plugin to read when pytest loads (the `CampaignConfig` it describes is built in
the campaign room: tests/harness/campaign/test_config.py)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

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
