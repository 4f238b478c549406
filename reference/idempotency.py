"""The idempotency key: one key per logical operation, the same on every retry and resume.

The ledger writes the key with the intent before the request leaves (`prepared`) and sends it
with every attempt, so a service that already applied the request answers with its receipt
instead of acting twice. The key is derived, never drawn at random: a worker that died before
committing its intent derives the same key again on resume. It hashes what makes the operation
one logical action (workflow, step, operation, business arguments) and nothing that varies
between attempts (time, attempt number, worker).
"""

from __future__ import annotations

from killpoint.contract.records import EffectIntent
from killpoint.reference.integrity import canonical_json, sha256_hex


def operation_id(step: str, intent: EffectIntent) -> str:
    return f"{step}/{intent.operation}"


def idempotency_key(workflow_id: str, step: str, intent: EffectIntent) -> str:
    """One key per logical operation: the hash of (workflow, step, operation, business args)."""
    doc = {
        "workflow_id": workflow_id,
        "step": step,
        "operation": intent.operation,
        "args": intent.args,
    }
    return "kp-" + sha256_hex(canonical_json(doc))[:40]


def fingerprint(intent: EffectIntent) -> str:
    """What the intent asks for (service, operation, arguments): a key reused for another
    request is told apart from a retry of the same one."""
    return sha256_hex(
        canonical_json(
            {"service": intent.service, "operation": intent.operation, "args": intent.args}
        )
    )
