"""killpoint: kill an agent's worker at every boundary, resume it, and prove it stayed safe.

What a team imports to point killpoint at its own agent and its own engine:

- the scenario contract — `Scenario`, `ExpectedEffect`, `GatePolicy`, `NamedCase`,
  `RecoveryObjectives` — and the workflow it runs: `Workflow`, `Step`, `StepKind`,
  `Transition`, `StepContext`;
- the vocabulary every engine shares: `EffectIntent`, `Receipt`, `EffectAdapter`,
  `EffectRecord`, `ApprovalRecord`, `RunStatus`, `EffectStatus`, `Outcome`, the
  service-outcome errors (`OutcomeUnknown`, `EffectRejected`, `CannotTell`) and `KillpointError`;
- the engine protocol: `EngineUnderTest` built by an `EngineFactory` from a `WorkerEnv` (an
  `OperatedEngine` also takes an operator's controls), an `EngineSpec` with its optional
  `HistoryReader` (returning `CheckpointRecord`s; a `QueueReader` also reads the engine's
  operator queue as `QueuedRun`s, an `AuditReader` its audit trail as `AuditedControl`s),
  tamper and prepare hooks, and the `StoreHandle` it is given;
- fault schedules and what a campaign returns: `FaultSchedule`, `History`, `Verdict`,
  `CampaignResult`, and `load_engine` / `load_schedule` to rebuild a run;
- the campaign entry point: `run_campaign(*scenarios, engine=..., **options)`, whose options are
  the fields of `CampaignOptions` — the same options, with the same defaults, as `killpoint run`
  and the pytest plugin take.

Names are imported on first use (PEP 562): `import killpoint` (which the pytest plugin does in
every session of a project that installs it) imports nothing of the harness or the engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from killpoint.contract.adapters import Capabilities, EffectAdapter
    from killpoint.contract.artifacts import ArtifactStore, FolderArtifacts
    from killpoint.contract.boundaries import BoundaryHook
    from killpoint.contract.clock import Clock, FakeClock, SystemClock
    from killpoint.contract.context import StepContext
    from killpoint.contract.errors import (
        ArtifactError,
        CannotTell,
        DefinitionError,
        EffectRejected,
        KillpointError,
        OutcomeUnknown,
    )
    from killpoint.contract.records import (
        ApprovalRecord,
        ArtifactRef,
        BudgetLimits,
        DeployNotice,
        EffectIntent,
        EffectRecord,
        EffectStatus,
        Outcome,
        Receipt,
        RunStatus,
        Versions,
    )
    from killpoint.contract.workflow import Step, StepKind, Transition, Workflow
    from killpoint.harness.campaign.launch import run_campaign
    from killpoint.harness.catalogue import Catalogue
    from killpoint.harness.engines.registry import load_engine
    from killpoint.harness.history import History
    from killpoint.harness.objectives import RecoveryObjectives
    from killpoint.harness.options import CampaignOptions
    from killpoint.harness.protocol import (
        AuditedControl,
        AuditReader,
        CheckpointRecord,
        EngineFactory,
        EngineSpec,
        EngineUnderTest,
        HistoryReader,
        NoHistory,
        OperatedEngine,
        QueuedRun,
        QueueReader,
        Shared,
        StoreHandle,
        WorkerEnv,
    )
    from killpoint.harness.results import CampaignResult, Verdict
    from killpoint.harness.scenario import ExpectedEffect, GatePolicy, NamedCase, Scenario
    from killpoint.harness.schedule import FaultSchedule, load_schedule

_CONTRACT = "killpoint.contract"
_HOMES = {
    "ApprovalRecord": f"{_CONTRACT}.records",
    "ArtifactError": f"{_CONTRACT}.errors",
    "ArtifactRef": f"{_CONTRACT}.records",
    "ArtifactStore": f"{_CONTRACT}.artifacts",
    "AuditReader": "killpoint.harness.protocol",
    "AuditedControl": "killpoint.harness.protocol",
    "BoundaryHook": f"{_CONTRACT}.boundaries",
    "BudgetLimits": f"{_CONTRACT}.records",
    "CampaignOptions": "killpoint.harness.options",
    "CampaignResult": "killpoint.harness.results",
    "CannotTell": f"{_CONTRACT}.errors",
    "Capabilities": f"{_CONTRACT}.adapters",
    "Catalogue": "killpoint.harness.catalogue",
    "CheckpointRecord": "killpoint.harness.protocol",
    "Clock": f"{_CONTRACT}.clock",
    "DefinitionError": f"{_CONTRACT}.errors",
    "DeployNotice": f"{_CONTRACT}.records",
    "EffectAdapter": f"{_CONTRACT}.adapters",
    "EffectIntent": f"{_CONTRACT}.records",
    "EffectRecord": f"{_CONTRACT}.records",
    "EffectRejected": f"{_CONTRACT}.errors",
    "EffectStatus": f"{_CONTRACT}.records",
    "EngineFactory": "killpoint.harness.protocol",
    "EngineSpec": "killpoint.harness.protocol",
    "EngineUnderTest": "killpoint.harness.protocol",
    "OperatedEngine": "killpoint.harness.protocol",
    "ExpectedEffect": "killpoint.harness.scenario",
    "FakeClock": f"{_CONTRACT}.clock",
    "FaultSchedule": "killpoint.harness.schedule",
    "FolderArtifacts": f"{_CONTRACT}.artifacts",
    "GatePolicy": "killpoint.harness.scenario",
    "History": "killpoint.harness.history",
    "HistoryReader": "killpoint.harness.protocol",
    "KillpointError": f"{_CONTRACT}.errors",
    "NamedCase": "killpoint.harness.scenario",
    "NoHistory": "killpoint.harness.protocol",
    "Outcome": f"{_CONTRACT}.records",
    "QueueReader": "killpoint.harness.protocol",
    "QueuedRun": "killpoint.harness.protocol",
    "OutcomeUnknown": f"{_CONTRACT}.errors",
    "Receipt": f"{_CONTRACT}.records",
    "RecoveryObjectives": "killpoint.harness.objectives",
    "RunStatus": f"{_CONTRACT}.records",
    "Scenario": "killpoint.harness.scenario",
    "Shared": "killpoint.harness.protocol",
    "Step": f"{_CONTRACT}.workflow",
    "StepContext": f"{_CONTRACT}.context",
    "StepKind": f"{_CONTRACT}.workflow",
    "StoreHandle": "killpoint.harness.protocol",
    "SystemClock": f"{_CONTRACT}.clock",
    "Transition": f"{_CONTRACT}.workflow",
    "Verdict": "killpoint.harness.results",
    "Versions": f"{_CONTRACT}.records",
    "WorkerEnv": "killpoint.harness.protocol",
    "Workflow": f"{_CONTRACT}.workflow",
    "load_engine": "killpoint.harness.engines.registry",
    "load_schedule": "killpoint.harness.schedule",
    "run_campaign": "killpoint.harness.campaign.launch",
}

__all__ = [
    "ApprovalRecord",
    "ArtifactError",
    "ArtifactRef",
    "ArtifactStore",
    "AuditReader",
    "AuditedControl",
    "BoundaryHook",
    "BudgetLimits",
    "CampaignOptions",
    "CampaignResult",
    "CannotTell",
    "Capabilities",
    "Catalogue",
    "CheckpointRecord",
    "Clock",
    "DefinitionError",
    "DeployNotice",
    "EffectAdapter",
    "EffectIntent",
    "EffectRecord",
    "EffectRejected",
    "EffectStatus",
    "EngineFactory",
    "EngineSpec",
    "EngineUnderTest",
    "ExpectedEffect",
    "FakeClock",
    "FaultSchedule",
    "FolderArtifacts",
    "GatePolicy",
    "History",
    "HistoryReader",
    "KillpointError",
    "NamedCase",
    "NoHistory",
    "OperatedEngine",
    "Outcome",
    "OutcomeUnknown",
    "QueueReader",
    "QueuedRun",
    "Receipt",
    "RecoveryObjectives",
    "RunStatus",
    "Scenario",
    "Shared",
    "Step",
    "StepContext",
    "StepKind",
    "StoreHandle",
    "SystemClock",
    "Transition",
    "Verdict",
    "Versions",
    "WorkerEnv",
    "Workflow",
    "load_engine",
    "load_schedule",
    "run_campaign",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'killpoint' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
