"""An installed package's `killpoint.engines` entry point: found by name, and whatever is wrong
with it is one line naming the entry point and the package, never a traceback.

The packages are dist-info folders on the path, as pip leaves an installed package."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import killpoint
from killpoint.contract.errors import KillpointError
from killpoint.harness.cli import app
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.engines.registry import installed_engines, load_engine

ENTRY_POINTS = """\
[killpoint.engines]
theirs = theirs_plain:factory
theirs-spec = theirs_plain:SPEC
theirs-variants = theirs_plain:spec
raising = theirs_raising:factory
absent = theirs_absent:factory
number = theirs_plain:NUMBER
module = theirs_plain
not-a-spec = theirs_plain:not_a_spec
"""
PLAIN = """\
from killpoint.harness.engines.reference import REFERENCE
from killpoint.harness.engines.spec import framework_spec

NUMBER = 3
SPEC = REFERENCE


def factory(env, scenario):
    return REFERENCE.factory(env, scenario)


def spec(variant="calm"):
    return framework_spec("theirs-variants", factory, variant, variants=("calm", "wild"))


def not_a_spec(variant=""):
    return "a spec, honestly"
"""
PACKAGE = "package their-engines 1.0"
NOT_ENGINE = (
    "is not an engine: an EngineSpec, a factory (env, scenario) or a spec function (variant)"
)


@pytest.fixture
def their_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A package `their-engines` installed on the path with the entry points above."""
    site = tmp_path / "site"
    info = site / "their_engines-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: their-engines\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    (site / "theirs_plain.py").write_text(PLAIN)
    (site / "theirs_raising.py").write_text("raise RuntimeError('their import went wrong')\n")
    monkeypatch.syspath_prepend(str(site))
    installed_engines.cache_clear()
    yield
    installed_engines.cache_clear()


@pytest.mark.usefixtures("their_package")
def test_an_installed_factory_spec_or_spec_function_is_found_by_its_entry_point_name() -> None:
    """Each is named (and so replayed) by the entry point's name, through the public door too."""
    theirs = load_engine("theirs")
    assert theirs.ref == "theirs" and theirs.reader is None
    assert killpoint.load_engine("theirs") == theirs
    spec = load_engine("theirs-spec")
    assert spec.ref == "theirs-spec" and spec.reader is REFERENCE.reader
    assert load_engine("theirs-variants").ref == "theirs-variants:calm"
    assert load_engine("theirs-variants:wild").ref == "theirs-variants:wild"
    with pytest.raises(KillpointError, match="theirs-variants has no variant 'tame': choose"):
        load_engine("theirs-variants:tame")
    with pytest.raises(KillpointError, match="--engine theirs has no variants, got 'wild'"):
        load_engine("theirs:wild")


@pytest.mark.usefixtures("their_package")
@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("raising", "cannot be loaded: RuntimeError: their import went wrong"),
        ("absent", "cannot be loaded: ModuleNotFoundError: No module named 'theirs_absent'"),
        ("number", f"{NOT_ENGINE}, got int"),
        ("module", f"{NOT_ENGINE}, got a module (theirs_plain)"),
        ("not-a-spec", f"{NOT_ENGINE}, got str"),
    ],
)
def test_a_broken_entry_point_is_one_line_naming_it_and_its_package(name: str, said: str) -> None:
    with pytest.raises(KillpointError) as raised:
        load_engine(name)
    message = str(raised.value)
    assert "\n" not in message
    value = next(p.value for p in installed_engines().values() if p.name == name)
    assert message == f"--engine {name}: entry point {name} = {value} of {PACKAGE} {said}"


@pytest.mark.usefixtures("their_package")
def test_the_cli_says_a_broken_entry_point_in_one_line_without_a_traceback(
    tmp_path: Path,
) -> None:
    result = CliRunner().invoke(
        app, ["run", "--engine", "raising", "-s", "email", "--workdir", str(tmp_path)]
    )
    assert result.exit_code == 2
    said = " ".join(result.stderr.split())
    assert f"entry point raising = theirs_raising:factory of {PACKAGE}" in said
    assert "Traceback" not in result.stderr + result.stdout
