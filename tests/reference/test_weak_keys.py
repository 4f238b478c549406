"""A checkpoint key shorter than 32 bytes is refused outside demo use: a short key forges seals."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from killpoint.harness.cli import app
from killpoint.reference.errors import WeakKeyError
from killpoint.reference.integrity import MIN_KEY_BYTES, SecretRef

WEAK = "k"


def test_a_one_byte_key_is_refused_by_the_secret_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KILLPOINT_CHECKPOINT_KEY", WEAK)
    with pytest.raises(WeakKeyError, match="1-byte key"):
        SecretRef().resolve()
    assert SecretRef(allow_weak=True).resolve() == b"k"


def test_a_key_of_the_minimum_length_is_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KILLPOINT_CHECKPOINT_KEY", "x" * MIN_KEY_BYTES)
    assert len(SecretRef().resolve()) == MIN_KEY_BYTES


def test_run_refuses_a_weak_key_in_one_line_before_any_folder(tmp_path: Path) -> None:
    runner = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": WEAK, "KILLPOINT_DATABASE_URL": None})
    result = runner.invoke(app, ["run", "--workdir", str(tmp_path / "w"), "--quiet"])
    assert result.exit_code == 2, result.output
    assert "1-byte key" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "w").exists() or not any((tmp_path / "w").iterdir())


def test_the_demo_allows_a_weak_key_with_a_warning(tmp_path: Path) -> None:
    runner = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": WEAK, "KILLPOINT_DATABASE_URL": None})
    db = f"sqlite:///{tmp_path / 'demo.sqlite'}"
    result = runner.invoke(app, ["demo", "--db", db])
    assert result.exit_code == 0, result.output
    assert "weak key" in result.output
