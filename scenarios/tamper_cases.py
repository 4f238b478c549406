"""Named cases for the tamper kinds an attacker or a bad disk really has: one per kind where
it applies (see `killpoint.harness.tampering`), so the main job stages every kind.

Seed 000's rows "Checkpoint record is tampered" and "Checkpoint schema is old" are staged with
checkpoints that stay validly sealed (another tenant's, another workflow's, an older one) and
with legacy checkpoints missing one security field at a time, and seed 001's "Kill the worker
after each external call" with the ledger row of that call rolled back; "Artifact is missing or hash
differs" with every kind of artifact damage, in every scenario that keeps artifacts, each at the
point where the next worker must read (or reuse) the artifact. An engine whose tamper hook
declines a kind gets `unknown` for that case, never a false violation.
"""

from __future__ import annotations

from collections.abc import Callable

from killpoint.contract.boundaries import ARTIFACT_UPLOADED
from killpoint.harness.history import History
from killpoint.harness.scenario import Expect, NamedCase
from killpoint.harness.schedule import FaultSchedule

Check = Callable[[History], str | None]

# (kind, its seed row, the expected recovery) of each checkpoint tampering the loader refuses
REFUSED = (
    (
        "foreign_tenant",
        "000: Checkpoint record is tampered (another tenant's sealed checkpoint)",
        "The loader checks whose checkpoint the seal vouches for: another tenant's is refused.",
    ),
    (
        "foreign_workflow",
        "000: Checkpoint record is tampered (another workflow's sealed checkpoint)",
        "The loader checks which workflow the seal vouches for: another workflow's is refused.",
    ),
    (
        "rollback",
        "000: Checkpoint record is tampered (rolled back to an older sealed checkpoint)",
        "The loader checks the sealed sequence against the latest committed: a rollback is "
        "refused.",
    ),
    (
        "legacy_no_limits",
        "000: Checkpoint schema is old (missing its budget limits)",
        "Quarantine the run: a missing budget is never defaulted.",
    ),
)
# where each artifact kind is staged: the scenario, and the hit the first worker dies at
ARTIFACT_POINTS = (
    ("research_publish", "draft", "step.begin"),  # the draft reads the research notes
    ("expensive_reuse", "build_report", "artifact.recorded"),  # reused, or built again
    ("handoff", "publish", "step.begin"),  # the accepted handoff publishes the gathered notes
)
ARTIFACT_KINDS = ("artifact_bitflip", "artifact_truncated", "artifact_swapped")
OLD_ARTIFACT_KINDS = ("artifact_corrupt", "artifact_missing")  # research_publish has these


def _schedule(scenario: str, name: str, kind: str, step: str, boundary: str) -> FaultSchedule:
    return FaultSchedule.model_validate(
        {
            "scenario": scenario,
            "run_id": "case-" + name.replace("_", "-"),
            "crashes": [{"worker": 0, "step": step, "boundary": boundary}],
            "tamper": [{"after_worker": 0, "kind": kind}],
        }
    )


def _all(*checks: Check) -> Expect:
    def expect(h: History) -> str | None:
        return next((p for check in checks if (p := check(h))), None)

    return expect


def _quarantined(h: History) -> str | None:
    if h.final_status != "quarantined":
        return f"ended {h.final_status} ({h.final_reason}), expected quarantined"
    return None


def _nothing_after_tamper(h: History) -> str | None:
    seq = h.tampered[0].journal_seq
    acted = [r for r in h.requests if r.seq > seq]
    return f"{len(acted)} request(s) after tampering" if acted else None


def _damage_not_used(h: History) -> str | None:
    """Stopped for review, or completed with the artifact produced again: never completed on
    the damaged bytes."""
    after = h.tampered[0].after_worker
    remade = any(x.boundary == ARTIFACT_UPLOADED and x.worker > after for x in h.hits)
    if h.final_status == "needs_review" or (h.final_status == "completed" and remade):
        return None
    return (
        f"ended {h.final_status} ({h.final_reason}) without producing the damaged artifact "
        "again: its damaged bytes were used"
    )


def _one_each(h: History) -> str | None:
    keys = [(r.service, r.operation, r.business_key) for r in h.applied]
    repeated = {k for k in keys if keys.count(k) > 1}
    return f"applied more than once: {sorted(repeated)}" if repeated else None


def _refused_cases() -> list[NamedCase]:
    cases = [
        NamedCase(
            f"checkpoint_{kind}",
            seed,
            _schedule("order_saga", f"checkpoint_{kind}", kind, "ship", "step.begin"),
            expected,
            _all(_quarantined, _nothing_after_tamper),
        )
        for kind, seed, expected in REFUSED
    ]
    cases.append(
        NamedCase(
            "ledger_rolled_back",
            "001: Kill the worker after each external call (and roll its ledger row back)",
            _schedule(
                "email",
                "ledger_rolled_back",
                "ledger_rolled_back",
                "notify",
                "effect.receipt_committed",
            ),
            "The ledger row disagrees with its append-only log: quarantine, never a second send.",
            _all(_quarantined, _nothing_after_tamper),
        )
    )
    cases.append(
        NamedCase(
            "schema_old_no_approval_expiry",
            "000: Checkpoint schema is old (an approval without its expiry)",
            _schedule(
                "approval_refund",
                "schema_old_no_approval_expiry",
                "legacy_no_approval_expiry",
                "refund",
                "step.begin",
            ),
            "Quarantine the run: an approval's expiry is never defaulted.",
            _all(_quarantined, _nothing_after_tamper),
        )
    )
    return cases


def _artifact_cases() -> list[NamedCase]:
    cases = []
    for scenario, step, boundary in ARTIFACT_POINTS:
        kinds = ARTIFACT_KINDS + (() if scenario == "research_publish" else OLD_ARTIFACT_KINDS)
        for kind in kinds:
            name = f"{scenario}_{kind}"
            cases.append(
                NamedCase(
                    name,
                    f"000: Artifact is missing or hash differs ({kind.split('_', 1)[1]})",
                    _schedule(scenario, name, kind, step, boundary),
                    "Stop and regenerate or escalate: damaged content is never used.",
                    _all(_damage_not_used, _one_each),
                )
            )
    return cases


TAMPER_CASES: tuple[NamedCase, ...] = (*_refused_cases(), *_artifact_cases())
