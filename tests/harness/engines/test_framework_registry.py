"""`--engine NAME[:VARIANT]` finds a framework's adapter by its entry point, and says plainly
what is missing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from killpoint.contract.errors import KillpointError
from killpoint.harness.cli import app
from killpoint.harness.engines.registry import OWN, installed_engines, plugin_engine
from tests.support.needs import needs_module

ADAPTERS = {
    "langgraph": "killpoint.harness.engines.langgraph:spec",
    "agent-framework": "killpoint.harness.engines.agent_framework:spec",
    "dbos": "killpoint.harness.engines.dbos:spec",
    "temporal": "killpoint.harness.engines.temporal:spec",
}


def test_killpoint_s_own_adapters_register_through_the_engines_entry_point_group() -> None:
    """No closed table of frameworks: killpoint's adapters are found as a team's engine is."""
    own = {n: p.value for n, p in installed_engines().items() if p.dist and p.dist.name == OWN}
    assert own == ADAPTERS


@pytest.mark.parametrize("framework", sorted(ADAPTERS))
def test_a_framework_whose_extra_is_missing_names_the_extra_to_install(
    framework: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    point = installed_engines()[framework]
    monkeypatch.delitem(sys.modules, point.module, raising=False)
    # what `import <framework package>` does where the package is not installed
    packages = ("langgraph", "agent_framework", "dbos", "temporalio")
    for name in [m for m in sys.modules if m.partition(".")[0] in packages]:
        monkeypatch.setitem(sys.modules, name, None)  # its submodules too: they are cached
    for name in packages:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(KillpointError) as raised:
        plugin_engine(point)
    assert str(raised.value).startswith(
        f"--engine {framework} needs its extra: pip install 'killpoint[{framework}]'"
    )


def test_an_unknown_variant_is_a_user_error_naming_the_variants(tmp_path: Path) -> None:
    needs_module("langgraph", "the langgraph extra is not installed")
    result = CliRunner().invoke(
        app, ["run", "--engine", "langgraph:clever", "-s", "email", "--workdir", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "langgraph has no variant 'clever': choose one of naive, keyed" in result.stderr


def test_an_unknown_engine_name_lists_the_known_ones(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["run", "--engine", "theirframework", "-s", "email", "--workdir", str(tmp_path)]
    )
    assert result.exit_code == 2
    said = " ".join(result.stderr.split())  # the error panel wraps it
    assert "no engine named 'theirframework'; known: reference," in said
    assert all(name in said for name in ADAPTERS)
