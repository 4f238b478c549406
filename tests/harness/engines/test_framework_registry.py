"""`--engine NAME[:VARIANT]` finds a framework's adapter, and says plainly what is missing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from killpoint.contract.errors import KillpointError
from killpoint.harness.cli import app
from killpoint.harness.engines.registry import FRAMEWORKS, framework_engine
from tests.support.needs import needs_module


@pytest.mark.parametrize("framework", sorted(FRAMEWORKS))
def test_a_framework_whose_extra_is_missing_names_the_extra_to_install(
    framework: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    adapter = f"killpoint.harness.engines.{FRAMEWORKS[framework]}"
    monkeypatch.delitem(sys.modules, adapter, raising=False)
    # what `import <framework package>` does where the package is not installed
    packages = ("langgraph", "agent_framework", "dbos", "temporalio")
    for name in [m for m in sys.modules if m.partition(".")[0] in packages]:
        monkeypatch.setitem(sys.modules, name, None)  # its submodules too: they are cached
    for name in packages:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(KillpointError) as raised:
        framework_engine(framework)
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
