"""A campaign's result names what produced it: killpoint's version, the package that provides
the engine, the command line as typed (a real campaign's stamp: `tests/reports/
test_mutant_report.py`)."""

from __future__ import annotations

from importlib.metadata import version

from killpoint.harness.campaign.provenance import engine_version, launched

OURS = f"killpoint {version('killpoint')}"


def test_our_engines_are_killpoints_own() -> None:
    assert engine_version(None) == engine_version("reference") == OURS
    assert engine_version("mutant:fresh_idempotency_key_on_resume") == OURS


def test_an_installed_engine_is_its_entry_points_distribution() -> None:
    assert engine_version("langgraph:naive") == OURS  # killpoint registers its own adapters


def test_a_module_engine_is_the_distribution_of_its_top_module() -> None:
    assert engine_version("pydantic.main:BaseModel") == f"pydantic {version('pydantic')}"


def test_an_engine_no_distribution_provides_has_no_version() -> None:
    assert engine_version("cmd:./my-engine") is None
    assert engine_version("engine.toml") is None
    assert engine_version("my_engine_nobody_installed:factory") is None


def test_the_command_line_names_its_program_not_where_it_was_installed() -> None:
    assert launched(["/home/ci/.venv/bin/killpoint", "run", "-s", "email"]) == [
        "killpoint",
        "run",
        "-s",
        "email",
    ]
    assert launched([]) == []
