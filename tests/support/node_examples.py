"""The Node examples of docs/, installed and built once per test session, for the tests that
run them (the LangGraph.js engine, the TypeScript hook snippet). Without node and npm their
tests skip, saying why, and fail under CI."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.needs import needs

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "langgraph-ts"
BUNDLE = EXAMPLE / "dist" / "main.js"


def _npm(*args: str) -> None:
    done = subprocess.run(
        ["npm", *args], cwd=EXAMPLE, capture_output=True, text=True, timeout=900, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"npm {' '.join(args)} in {EXAMPLE} failed: {done.stderr[-2_000:]}")


def _stale() -> bool:
    if not BUNDLE.exists():
        return True
    sources = [*(EXAMPLE / "src").glob("*.ts"), EXAMPLE / "package-lock.json"]
    return max(p.stat().st_mtime for p in sources) > BUNDLE.stat().st_mtime


@pytest.fixture(scope="session")
def langgraph_ts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example, installed (`npm ci` when its node_modules is missing) and built (when its
    bundle is missing or older than its sources), once for every test worker of the session."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        needs(False, f"the LangGraph.js example needs {' and '.join(missing)} on PATH")
    # the parent of the base temp folder is shared by xdist's workers: one of them builds
    with (tmp_path_factory.getbasetemp().parent / "langgraph-ts.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (EXAMPLE / "node_modules").is_dir():
            _npm("ci")
        if _stale():
            _npm("run", "build")
    return EXAMPLE
