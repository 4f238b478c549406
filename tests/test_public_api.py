"""The public face: the names a user imports from `killpoint`, pinned so a rename is deliberate,
and the own-engine example, which must need nothing else."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import killpoint

ROOT = Path(__file__).parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "json_file_engine.py"


def test_every_public_name_resolves_and_is_listed_once() -> None:
    assert len(set(killpoint.__all__)) == len(killpoint.__all__)
    assert killpoint.__all__ == sorted(killpoint.__all__)
    for name in killpoint.__all__:
        assert getattr(killpoint, name) is not None, name


def test_the_public_face_names_the_protocol_the_contract_and_the_records() -> None:
    expected = {
        # the scenario contract and the workflow it runs
        "Scenario", "ExpectedEffect", "GatePolicy", "NamedCase", "RecoveryObjectives",
        "Workflow", "Step", "StepKind", "Transition", "StepContext",
        # the vocabulary every engine shares
        "EffectIntent", "Receipt", "EffectAdapter", "EffectRecord", "ApprovalRecord",
        "RunStatus", "EffectStatus", "Outcome", "KillpointError", "OutcomeUnknown",
        "EffectRejected", "CannotTell",
        # the engine protocol
        "WorkerEnv", "StoreHandle", "EngineUnderTest", "EngineFactory", "EngineSpec",
        "HistoryReader", "CheckpointRecord", "OperatedEngine",
        # schedules and results
        "FaultSchedule", "History", "Verdict", "CampaignResult", "load_engine", "load_schedule",
    }  # fmt: skip
    assert expected <= set(killpoint.__all__)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        getattr(killpoint, "NoSuchThing")  # noqa: B009 - the name is not known statically


def test_importing_killpoint_imports_nothing_of_the_harness() -> None:
    """The pytest plugin's package is imported in every session of a project that installs
    killpoint: it must cost nothing until a name is used."""
    code = "import sys, killpoint; print(sorted(m for m in sys.modules if 'killpoint.' in m))"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"


def _imported_modules(source: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_the_own_engine_example_imports_only_public_killpoint_names() -> None:
    """An engine we do not own is written against the public face alone."""
    ours = {m for m in _imported_modules(EXAMPLE.read_text()) if m.split(".")[0] == "killpoint"}
    assert ours == {"killpoint"}
    tree = ast.parse(EXAMPLE.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "killpoint":
            assert {a.name for a in node.names} <= set(killpoint.__all__)
