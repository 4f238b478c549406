"""A team's own engine, pointed at by `killpoint run --engine json_file_engine:factory`.

It is the engine many agents start with: progress in a JSON file, written after each step, and
tool calls made directly, with no effect ledger. killpoint finds what that costs: kill it after
a non-idempotent call returned and before the file was written, and the call runs twice.

It supports the step kinds the order_saga scenario uses (pure, effect, verify), reports its
boundaries through `env.hook` (optional: the harness also watches the HTTP transport), and
exposes no history reader, so only the checkers that read the services' journals judge it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from killpoint import (
    EffectRecord,
    EffectStatus,
    FolderArtifacts,
    KillpointError,
    Outcome,
    Scenario,
    StepContext,
    StepKind,
    WorkerEnv,
)


class JsonFileEngine:
    def __init__(self, env: WorkerEnv, scenario: Scenario) -> None:
        self.env = env
        self.workflow = scenario.workflow
        self.adapters = scenario.make_adapters(env.http)
        self.folder = env.workdir / "json-file-engine"
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, workflow_id: str) -> Path:
        return self.folder / f"{workflow_id.replace(':', '_')}.json"

    def start(self, scenario: Scenario, workflow_id: str, input: Mapping[str, Any]) -> bool:
        path = self._path(workflow_id)
        if path.exists():
            return False
        doc = {"state": self.workflow.initial, "input": dict(input), "outputs": {}, "effects": []}
        path.write_text(json.dumps(doc))
        return True

    def resume(self, workflow_id: str) -> Outcome:
        path = self._path(workflow_id)
        doc = json.loads(path.read_text())
        sequence = 0
        while doc["state"] not in self.workflow.terminal:
            transition = self.workflow.transition_from(doc["state"])
            assert transition is not None
            step = transition.step
            self.env.hook("step.begin", step.name)
            ctx = StepContext(
                workflow_id=workflow_id,
                step=step.name,
                input=doc["input"],
                outputs=doc["outputs"],
                artifact_refs={},
                effects=tuple(EffectRecord.model_validate(e) for e in doc["effects"]),
                store=FolderArtifacts(self.folder / "artifacts"),
                hook=self.env.hook,
                now=self.env.clock.now(),
            )
            if step.kind is StepKind.PURE and step.compute is not None:
                doc["outputs"][step.name] = step.compute(ctx)
            elif step.kind is StepKind.EFFECT and step.intents is not None:
                adapter = self.adapters[step.service or ""]
                for intent in step.intents(ctx):
                    operation_id = f"{workflow_id}:{step.name}:{intent.operation}"
                    # a key travels as a path segment and a header: letters and digits only
                    key = "k" + hashlib.sha256(operation_id.encode()).hexdigest()[:40]
                    receipt = adapter.send(intent, key)
                    doc["effects"].append(
                        EffectRecord(
                            workflow_id=workflow_id,
                            operation_id=operation_id,
                            step=step.name,
                            service=intent.service,
                            intent=intent.operation,
                            args=intent.args,
                            idempotency_key=key,
                            fingerprint="",
                            status=EffectStatus.COMMITTED,
                            attempts=1,
                            receipt=receipt,
                            updated_at=self.env.clock.now(),
                        ).model_dump(mode="json")
                    )
            elif step.kind is StepKind.VERIFY:
                pass  # trusts the receipts it kept (a second mistake the harness can show)
            else:
                raise KillpointError(f"json-file engine cannot run {step.kind} steps")
            doc["state"] = transition.target
            path.write_text(json.dumps(doc))  # the only record of progress
            sequence += 1
            self.env.hook("checkpoint.committed", step.name)
        return Outcome(workflow_id, self.workflow.terminal[doc["state"]], doc["state"], sequence)

    def grant(self, workflow_id: str, gate: str, actor: str, ttl_s: float) -> None:
        raise KillpointError("json-file engine has no approval gates")


def factory(env: WorkerEnv, scenario: Scenario) -> JsonFileEngine:
    return JsonFileEngine(env, scenario)
