"""What the loader fuzz tests share: the input file, the CLI that must refuse it, any bytes."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

from hypothesis import strategies as st
from typer.testing import CliRunner

from killpoint.harness.cli import app
from tests.support import hostile_json as hj
from tests.support.fixtures import TEST_KEY

File = Callable[[bytes], Path]


def refused_by_the_cli(*args: str, outputs: tuple[str, ...] = ()) -> None:
    """`killpoint ARGS…` in a fresh folder: one line on stderr, exit 2, nothing created there
    (`outputs` are flags whose files it was asked to write)."""
    runner = CliRunner(env={"KILLPOINT_CHECKPOINT_KEY": TEST_KEY, "KILLPOINT_DATABASE_URL": None})
    with tempfile.TemporaryDirectory() as folder:
        here = Path(folder)
        asked = [part for flag in outputs for part in (flag, str(here / flag.strip("-")))]
        work = ["--workdir", str(here / "work")] if args[0] != "merge" else []
        result = runner.invoke(app, [*args, *work, *asked])
        assert result.exit_code == 2, (result.exception, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stdout + result.stderr
        assert list(here.iterdir()) == []


any_bytes = st.binary(max_size=200) | hj.json_values.map(lambda v: json.dumps(v).encode())
