"""Any catalogue scenario as a framework's units, without re-coding it.

A framework runs units — a LangGraph node, an Agent Framework executor, a DBOS step, a Temporal
activity — and checkpoints between them. This module maps a scenario's workflow onto such
units generically: one unit per step, named after it, whose body is `Units.run`, and a router
(`next_unit`) that follows the workflow's transitions from the state name the last unit left.
The state a framework carries between units is a plain JSON document (`initial_state`), so
every framework can serialise it.

What a unit does with a downstream service is the variant under test, the `Keying`:

* `naive`: what a first adapter does. The unit calls the service with the client's own
  idempotency key, new for every call (as HTTP client libraries generate them), and trusts the
  framework to resume from its last checkpoint. A death after the service committed and before
  the framework checkpointed re-runs the unit and repeats the effect.
* `keyed`: what a careful user adds without a ledger engine. A key stable per (workflow, step,
  operation); a lookup before sending to a service that can answer one; and, for a service that
  can neither dedupe nor answer (e-mail), an attempt mark written before the send to a file of
  the adapter's own, so a re-run that finds the mark stops for review instead of sending again.
  What this lacks is a lease: two workers both look, both find nothing, both send.

What a framework lacks, the units say (`LACKS`): no budget, no fencing token, no lease, no
ledger, no tenant, no versions; the history readers leave those fields empty, and the checkers
and named cases that need them answer unknown. The keyed variant retries a send while a lookup
or its key keeps the retry safe, as far as the scenario's attempts allow; the naive one three
times, each with a key of its own.
Human gates are kept in a grants file beside the attempt marks (`Grants`), so the harness's
`grant` reaches any framework the same way, and a protected step checks its grant before
every send.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import uuid
from collections.abc import Mapping
from contextlib import suppress
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from killpoint.contract import boundaries as b
from killpoint.contract.adapters import EffectAdapter
from killpoint.contract.artifacts import FolderArtifacts
from killpoint.contract.context import StepContext
from killpoint.contract.errors import (
    CannotTell,
    EffectRejected,
    OutcomeUnknown,
)
from killpoint.contract.records import (
    ArtifactRef,
    EffectIntent,
    EffectRecord,
    EffectStatus,
    Outcome,
    Receipt,
    RunStatus,
)
from killpoint.contract.workflow import Step, Workflow
from killpoint.harness.engines.units_files import Attempts as Attempts  # the adapters' names
from killpoint.harness.engines.units_files import Grants as Grants
from killpoint.harness.protocol import CheckpointRecord, StoreHandle, WorkerEnv
from killpoint.harness.scenario import Scenario

State = dict[str, Any]  # the JSON document a framework carries between units
NAIVE_TRIES = 3  # a client library's retries, each with a key of its own
FOLDER = "units"  # under the store's work folder: attempt marks, grants, artifacts
# What no framework adapter here keeps: the checkers that need them answer unknown (a
# framework keeps no operator queue: a run it stops for a person waits where no one reads).
LACKS = frozenset({"budget", "fencing", "lease", "ledger", "queue", "tenant", "versions"})


class Keying(StrEnum):
    NAIVE = "naive"
    KEYED = "keyed"


VARIANTS = tuple(k.value for k in Keying)


def initial_state(workflow: Workflow, input: Mapping[str, JsonValue], now: float) -> State:
    return {
        "workflow": workflow.name,
        "state": workflow.initial,
        "status": RunStatus.RUNNING.value,
        "reason": "",
        "input": dict(input),
        "outputs": {},
        "artifacts": {},
        "effects": [],
        "at": now,
    }


def next_unit(workflow: Workflow, state: State) -> str | None:
    """The unit to run after `state`, or None once the run is terminal or waits for a human."""
    if state["status"] != RunStatus.RUNNING.value or state["state"] in workflow.terminal:
        return None
    transition = workflow.transition_from(state["state"])
    return None if transition is None else transition.step.name


def reopen(state: State) -> State:
    """The state a resume starts from: a run that waited for a human is running again, so its
    gate is checked anew (a grant may have come, or lapsed); any other state as it is."""
    if state["status"] != RunStatus.WAITING_APPROVAL.value:
        return state
    return {**state, "status": RunStatus.RUNNING.value, "reason": ""}


def stable_key(operation_id: str) -> str:
    """The keyed variant's idempotency key: one per (workflow, step, operation), always."""
    return "u-" + hashlib.sha256(operation_id.encode()).hexdigest()[:40]


def status_of(workflow: Workflow, state: State) -> RunStatus:
    if state["status"] == RunStatus.RUNNING.value and state["state"] in workflow.terminal:
        return workflow.terminal[state["state"]]
    return RunStatus(state["status"])


def outcome_of(workflow: Workflow, workflow_id: str, state: State, sequence: int) -> Outcome:
    return Outcome(
        workflow_id, status_of(workflow, state), state["state"], sequence, state["reason"]
    )


def checkpoint_record(
    workflow: Workflow, sequence: int, state: State, size: int | None = None
) -> CheckpointRecord:
    """A framework's checkpoint of the units' state, as the oracle reads it: numbered by the
    reader in the framework's own order, timed on the world clock the unit read, its status the
    run's workflow's (a terminal state it reached is its end, whatever the units wrote)."""
    return CheckpointRecord(
        sequence=sequence,
        state=state["state"],
        status=status_of(workflow, state).value,
        reason=state["reason"],
        outputs=state["outputs"],
        created_at=float(state["at"]),
        size=size,
    )


def folder_of(handle: StoreHandle) -> Path:
    return handle.workdir / FOLDER


def reset_folder(handle: StoreHandle) -> None:
    shutil.rmtree(folder_of(handle), ignore_errors=True)


class Halt(Exception):
    """A unit ends the run here: needs review, waiting for approval, or failed."""

    def __init__(self, status: RunStatus, reason: str, state: str | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.state = status, reason, state


class Units:
    """The bodies of one scenario's units, for one worker: each takes the state the framework
    hands it and returns the next."""

    def __init__(self, env: WorkerEnv, scenario: Scenario, keying: Keying) -> None:
        self.env = env
        self.workflow = scenario.workflow
        self.adapters: Mapping[str, EffectAdapter] = scenario.make_adapters(env.http)
        self.keying = keying
        # the keyed variant retries while a lookup or the key keeps a retry safe, as far as
        # the scenario's attempts allow: what a durable budget would let it spend
        self.tries = scenario.limits.attempts if keying is Keying.KEYED else NAIVE_TRIES
        root = folder_of(env.store)
        self.artifacts = FolderArtifacts(root / "artifacts")
        self.grants = Grants(root)
        self.attempts = Attempts(root)

    def run(self, workflow_id: str, step_name: str, state: State) -> State:
        """Run the unit of `step_name` on `state`; the state the framework checkpoints next."""
        step = self.workflow.step(step_name)
        transition = self.workflow.transition_from(state["state"])
        assert transition is not None and transition.step.name == step_name, step_name
        self.env.hook(b.STEP_BEGIN, step.name)
        new: State = json.loads(json.dumps(state))  # a copy: the framework's is never mutated
        try:
            getattr(self, step.kind.value)(workflow_id, step, new)
            new["state"] = transition.target
        except EffectRejected as exc:
            if transition.on_failure is None:
                self._halt(new, Halt(RunStatus.FAILED, f"{step.name}: rejected: {exc}"))
            else:
                new["state"] = transition.on_failure
        except Halt as halt:
            self._halt(new, halt)
        if new["status"] == RunStatus.RUNNING.value and new["state"] in self.workflow.terminal:
            new["status"] = self.workflow.terminal[new["state"]].value  # readers need no workflow
        new["at"] = self.env.clock.now()
        return new

    @staticmethod
    def _halt(state: State, halt: Halt) -> None:
        state["status"], state["reason"] = halt.status.value, halt.reason
        if halt.state is not None:
            state["state"], state["status"] = halt.state, RunStatus.RUNNING.value

    # -- the kinds --------------------------------------------------------------------------

    def pure(self, workflow_id: str, step: Step, state: State) -> None:
        assert step.compute is not None
        value = step.compute(self.context(workflow_id, step, state))
        self._validate(step, value)
        if value is not None:
            state["outputs"][step.name] = value

    def expensive(self, workflow_id: str, step: Step, state: State) -> None:
        assert step.produce is not None
        data = step.produce(self.context(workflow_id, step, state))
        self._validate(step, data.decode("utf-8", "replace"))
        sha, uri = self.artifacts.put(data)
        self.env.hook(b.ARTIFACT_UPLOADED, step.name)
        ref = ArtifactRef(uri=uri, sha256=sha, media_type=step.media_type, produced_by=step.name)
        state["artifacts"][step.name] = ref.model_dump(mode="json")

    def effect(self, workflow_id: str, step: Step, state: State) -> None:
        self._guard(workflow_id, step)
        assert step.intents is not None and step.service is not None
        ctx = self.context(workflow_id, step, state)
        adapter = self.adapters[step.service]
        for intent in step.intents(ctx):
            record = self.send(workflow_id, step, adapter, intent, ctx)
            state["effects"].append(record.model_dump(mode="json"))

    def compensate(self, workflow_id: str, step: Step, state: State) -> None:
        self.effect(workflow_id, step, state)
        for row in state["effects"]:
            if row["step"] == step.target_step and row["status"] in ("committed", "verified"):
                row["status"], row["reason"] = "compensated", f"compensated by {step.name}"

    def verify(self, workflow_id: str, step: Step, state: State) -> None:
        assert step.service is not None
        adapter = self.adapters[step.service]
        rows = [r for r in state["effects"] if r["step"] == step.target_step]
        if not rows:
            raise Halt(RunStatus.NEEDS_REVIEW, f"{step.name}: no effect of {step.target_step!r}")
        for row in rows:
            if row["status"] == "verified":
                continue
            record = EffectRecord.model_validate(row)
            if record.receipt is None:
                raise Halt(RunStatus.NEEDS_REVIEW, f"{record.operation_id}: no receipt to verify")
            self._read_postcondition(step, adapter, record)
            row["status"] = "verified"

    def approval(self, workflow_id: str, step: Step, state: State) -> None:
        assert step.gate is not None
        if not self.grants.valid(workflow_id, step.gate, self.env.clock.now()):
            self.env.hook(b.APPROVAL_REQUESTED, step.name)
            raise Halt(RunStatus.WAITING_APPROVAL, f"awaiting approval at gate {step.gate!r}")

    # -- what the kinds share ---------------------------------------------------------------

    def send(
        self,
        workflow_id: str,
        step: Step,
        adapter: EffectAdapter,
        intent: EffectIntent,
        ctx: StepContext,
    ) -> EffectRecord:
        """One intent to a committed record, or a Halt: the variant's whole difference."""
        stable = f"{workflow_id}/{step.name}/{intent.operation}"
        receipt, attempts, key = None, 0, stable_key(stable)
        for _ in range(self.tries):
            # a key is a path segment and a header: letters and digits only
            key = stable_key(stable) if self.keying is Keying.KEYED else uuid.uuid4().hex
            if self.keying is Keying.KEYED:
                receipt = self._before_send(adapter, intent, key)
                if receipt is not None:
                    break
            self._guard(workflow_id, step)  # a grant and terms may lapse mid-step
            self._check_terms(step, ctx)
            attempts += 1
            try:
                receipt = adapter.send(intent, key)
                break
            except OutcomeUnknown:
                continue
        if receipt is None and self.keying is Keying.KEYED:
            raise Halt(RunStatus.BUDGET_EXHAUSTED, f"{stable}: all {attempts} attempts were spent")
        if receipt is None:
            raise Halt(RunStatus.NEEDS_REVIEW, f"{stable}: outcome unknown after {attempts} sends")
        return EffectRecord(
            workflow_id=workflow_id,
            operation_id=stable,
            step=step.name,
            service=intent.service,
            intent=intent.operation,
            args=intent.args,
            idempotency_key=key,
            status=EffectStatus.COMMITTED,
            attempts=attempts,
            receipt=receipt,
            updated_at=self.env.clock.now(),
        )

    def _before_send(
        self, adapter: EffectAdapter, intent: EffectIntent, key: str
    ) -> Receipt | None:
        """The keyed variant's checks: a receipt if the effect already happened, None to send."""
        if adapter.queryable:
            try:
                found = adapter.lookup(intent, key)
            except (CannotTell, OutcomeUnknown) as exc:
                if not adapter.idempotent:
                    raise Halt(
                        RunStatus.NEEDS_REVIEW, f"{key}: cannot tell if sent: {exc}"
                    ) from exc
                found = None
            self.env.hook(b.RECONCILE_LOOKED_UP, None)
            return found
        if not adapter.idempotent:
            if self.attempts.marked(key):
                raise Halt(RunStatus.NEEDS_REVIEW, f"{key}: sent before, outcome unknown")
            self.attempts.mark(key)
        return None

    def _guard(self, workflow_id: str, step: Step) -> None:
        """A protected step sends only under a grant valid now; else back to its gate."""
        if step.gate is not None and not self.grants.valid(
            workflow_id, step.gate, self.env.clock.now()
        ):
            raise Halt(
                RunStatus.RUNNING,
                f"no valid approval {step.gate!r}",
                self.workflow.gate_state(step.gate),
            )

    def _check_terms(self, step: Step, ctx: StepContext) -> None:
        deadline = step.expires(ctx) if step.expires is not None else None
        if deadline is not None and self.env.clock.now() >= deadline:
            raise Halt(
                RunStatus.NEEDS_REVIEW, f"{step.name}: its terms expired at t={deadline:.1f}"
            )

    def _read_postcondition(self, step: Step, adapter: EffectAdapter, record: EffectRecord) -> None:
        assert record.receipt is not None
        intent = EffectIntent(operation=record.intent, service=record.service, args=record.args)
        for read in range(step.max_verify_reads):
            seen = False
            with suppress(OutcomeUnknown):
                seen = adapter.verify(intent, record.receipt)
            self.env.hook(b.VERIFY_READ, step.name)
            if seen:
                return
            self.env.clock.sleep(2.0**read)
        raise Halt(
            RunStatus.NEEDS_REVIEW,
            f"{record.operation_id}: postcondition not visible after {step.max_verify_reads} reads",
        )

    def _validate(self, step: Step, value: JsonValue) -> None:
        problem = step.validate(value) if step.validate is not None else None
        if problem:
            raise Halt(RunStatus.NEEDS_REVIEW, f"{step.name} output failed validation: {problem}")

    def context(self, workflow_id: str, step: Step, state: State) -> StepContext:
        return StepContext(
            workflow_id=workflow_id,
            step=step.name,
            input=state["input"],
            outputs=state["outputs"],
            artifact_refs={k: ArtifactRef.model_validate(v) for k, v in state["artifacts"].items()},
            effects=tuple(EffectRecord.model_validate(e) for e in state["effects"]),
            store=self.artifacts,
            hook=self.env.hook,
            now=self.env.clock.now(),
        )
