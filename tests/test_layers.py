"""The oracle judges any engine: loading it must not load ours, nor the database layer ours uses.

import-linter (`lint-imports`, run by .ci/run) checks the written contracts statically; this
checks what a fresh interpreter really loads, lazy imports and all.
"""

from __future__ import annotations

import json
import subprocess
import sys

ORACLE = (
    "killpoint.harness.checkers",
    "killpoint.harness.history",
    "killpoint.harness.results",
    "killpoint.harness.checkers.measures",
    "killpoint.reports",
)


def _loaded_after(*modules: str) -> set[str]:
    code = (
        "import importlib, json, sys\n"
        f"for name in {list(modules)!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


def test_the_oracle_loads_neither_the_reference_engine_nor_sqlalchemy() -> None:
    loaded = _loaded_after(*ORACLE)
    assert set(ORACLE) <= loaded  # it really loaded the oracle
    assert not {m for m in loaded if m == "sqlalchemy" or m.startswith("sqlalchemy.")}
    assert not {m for m in loaded if m.startswith("killpoint.reference")}


def test_the_oracle_judges_a_history_in_a_fresh_interpreter() -> None:
    """Not only importable: the checkers run without the engine."""
    code = (
        "import sys\n"
        "from killpoint.harness.checkers import CHECKERS\n"
        "assert 'single_effect' in CHECKERS\n"
        "assert not [m for m in sys.modules if m.startswith(('sqlalchemy', "
        "'killpoint.reference'))]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_contract_loads_nothing_of_the_harness() -> None:
    loaded = _loaded_after("killpoint.contract.workflow", "killpoint.contract.context")
    ours = {m for m in loaded if m.startswith("killpoint.")}
    assert ours and all(
        m.startswith("killpoint.contract") or m == "killpoint.harness" for m in ours
    )
