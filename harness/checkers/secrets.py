"""Secrets kept: none of the secrets the world handed the engine is in anything the run left.

Seed 000: "Do not serialize secrets into a checkpoint simply because they were present in
memory. Save references to secret-manager entries." A sealing key stored beside the checkpoints
it seals lets whoever reads the store forge one the engine accepts; a token in a row outlives
every rotation. The evidence is the scan the harness made after the run
(`History.canaries`, `killpoint.harness.run.canary_scan`): the engine's store, its work folder,
every file the run wrote, the history. False names each secret and where it lay (never its
value); unknown when the run was not scanned or a place could not be read.
"""

from __future__ import annotations

from killpoint.contract.workflow import Workflow
from killpoint.harness.checkers._common import ok, unknown, violated
from killpoint.harness.history import History
from killpoint.harness.results import Verdict

NAME = "secrets_kept"


def check_secrets(history: History, workflow: Workflow) -> Verdict:
    scan = history.canaries
    if scan is None:
        return unknown(NAME, "the run was not scanned for the world's secrets (canaries off)")
    if scan.findings:
        first = scan.findings[0]
        return violated(
            NAME,
            f"the engine stored the world's {first.canary}: found in {first.where}",
            [f"{f.label()}" for f in scan.findings],
        )
    if scan.unscanned:
        return unknown(NAME, f"could not scan {scan.unscanned[0]}")
    names = ", ".join(scan.canaries) or "no secret"
    return ok(NAME, f"{names}: in none of the store, the run's files and its history")
