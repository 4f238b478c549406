"""Engine failure: the engine under test raised nothing but killpoint's own errors.

An exception of another type (a parse error from a corrupt artifact, a `KeyError` from a
checkpoint missing a field) is a crash the engine did not mean: the harness keeps it with its
traceback (`History.failures`) and carries on, and this checker makes it a violation. Its
evidence is the harness's own record of every call into the engine, so it is never unknown.
"""

from __future__ import annotations

from killpoint.contract.workflow import Workflow
from killpoint.harness.checkers._common import ok, violated
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "engine_failure"
TRACE_LINES = 12  # the end of each traceback: where it was raised


def check_engine_failure(history: History, workflow: Workflow) -> Verdict:
    failures = history.failures
    if not failures:
        return ok(NAME)
    first = failures[0]
    evidence = [f"{first.where} raised {first.error}"]
    evidence += first.traceback.rstrip().splitlines()[-TRACE_LINES:]
    evidence += [f"{f.where} raised {f.error}" for f in failures[1:]]
    workers = sorted({int(f.where.split()[1]) for f in failures if f.where.startswith("worker ")})
    return violated(
        NAME,
        f"{first.where} raised {first.error}"
        + (f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""),
        evidence,
        [EvidenceRef(kind="worker", index=w) for w in workers],
    )
