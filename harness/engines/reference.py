"""The reference engine behind the harness protocol, and its history reader.

Mutants subclass `ReferenceEngine` and swap `engine_class` (or the store), so every mutant is
the reference engine with exactly one mistake.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import JsonValue

from killpoint.harness.contract.artifacts import FolderArtifacts
from killpoint.harness.contract.records import ApprovalRecord, EffectRecord, Outcome
from killpoint.harness.engine.dispatcher import Engine
from killpoint.harness.engine.envelope import open_checkpoint
from killpoint.harness.engine.errors import IntegrityError
from killpoint.harness.engine.integrity import SecretRef, parse_sealed
from killpoint.harness.engine.migrations import upgrade
from killpoint.harness.engine.store import StepOutput, Store
from killpoint.harness.protocol import CheckpointView, WorkerEnv
from killpoint.scenarios.base import Scenario


class ReferenceEngine:
    engine_class: type[Engine] = Engine

    def __init__(self, env: WorkerEnv, scenario: Scenario) -> None:
        store = env.shared.get("store")
        self.store: Store = store if isinstance(store, Store) else Store(env.store_url)
        self.engine = self.build(env, scenario)

    def build(self, env: WorkerEnv, scenario: Scenario) -> Engine:
        return self.engine_class(
            self.store,
            [scenario.workflow],
            scenario.make_adapters(env.http),
            artifacts=FolderArtifacts(env.workdir / "artifacts"),
            clock=env.clock,
            versions=env.versions,
            tenant=env.tenant,
            owner=env.owner,
            lease_ttl=env.lease_ttl,
            hook=env.hook,
        )

    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, JsonValue]) -> bool:
        return self.engine.start(scenario.workflow.name, workflow_id, input, scenario.limits)

    def resume(self, workflow_id: str) -> Outcome:
        return self.engine.resume(workflow_id)

    def grant(self, workflow_id: str, gate: str, actor: str, ttl_s: float) -> None:
        self.engine.grant(workflow_id, gate, actor, ttl_s)


def reference_factory(env: WorkerEnv, scenario: Scenario) -> ReferenceEngine:
    return ReferenceEngine(env, scenario)


class StoreReader:
    """Reads the reference store for the oracle; a checkpoint that fails its seal is shown
    as untrusted with only its row's fields, never parsed."""

    def __init__(self, store: Store, tenant: str, secret: SecretRef | None = None) -> None:
        self.store = store
        self.tenant = tenant
        self.secret = secret or SecretRef()

    def checkpoints(self, workflow_id: str) -> list[CheckpointView]:
        key = self.secret.resolve()
        views = []
        rows = self.store.checkpoints(workflow_id)
        stored = self.store.outputs(workflow_id, 0, rows[-1].sequence) if rows else []
        outputs = _OutputsAt(stored)
        extra: dict[int, int] = {}  # bytes of the output rows each checkpoint committed
        for o in stored:
            size = len(o.step) + len(o.value) + len(o.sha256)
            extra[o.sequence] = extra.get(o.sequence, 0) + size
        for row in rows:
            base: dict[str, Any] = {
                "sequence": row.sequence,
                "state": row.state,
                "run_id": row.run_id,
                "fencing_token": row.fencing_token,
                "created_at": row.created_at,
                "size": len(row.body) + len(row.tag) + extra.get(row.sequence, 0),
            }
            try:
                cp = open_checkpoint(row, key, self.tenant)
            except IntegrityError as exc:
                views.append(
                    CheckpointView(**base, status="untrusted", reason=str(exc), trusted=False)
                )
                continue
            views.append(
                CheckpointView(
                    **base,
                    status=cp.status.value,
                    reason=cp.status_reason,
                    parent_run_id=cp.lineage.parent_run_id,
                    decision=cp.lineage.decision,
                    budget={k: float(v) for k, v in cp.budget.model_dump().items()},
                    approvals=[a.model_dump(mode="json") for a in cp.approvals],
                    outputs={**cp.outputs, **outputs.at(cp.outputs_ref.since, cp.sequence)},
                )
            )
        return views

    def effects(self, workflow_id: str) -> list[EffectRecord]:
        return self.store.effects(workflow_id)

    def approvals(self, workflow_id: str) -> list[ApprovalRecord]:
        return self.store.approvals(workflow_id)

    def compacted_below(self, workflow_id: str) -> int:
        return self.store.compacted_below(workflow_id)


class _OutputsAt:
    """The output rows a checkpoint pins, for checkpoints read in order (one pass, not n²)."""

    def __init__(self, rows: list[StepOutput]) -> None:
        self.rows = rows
        self.since = -1
        self.next = 0
        self.seen: dict[str, JsonValue] = {}

    def at(self, since: int, upto: int) -> dict[str, JsonValue]:
        if since != self.since:  # a new run of the workflow: its outputs start over
            self.since, self.seen = since, {}
            self.next = next(
                (i for i, r in enumerate(self.rows) if r.sequence > since), len(self.rows)
            )
        while self.next < len(self.rows) and self.rows[self.next].sequence <= upto:
            row = self.rows[self.next]
            self.seen[row.step] = json.loads(row.value)
            self.next += 1
        return dict(self.seen)


def unverified_document(body: bytes) -> dict[str, Any]:
    """Parse a checkpoint body without trusting it: for display of rejected rows only."""
    return upgrade(parse_sealed(body))
