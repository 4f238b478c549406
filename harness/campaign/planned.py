"""What a plan is made of: the options that shape it and the runs it plans (`plan`)."""

from __future__ import annotations

from dataclasses import dataclass

from killpoint.harness.campaign.recording import Risk
from killpoint.harness.history import HitRecord
from killpoint.harness.results import RunKind
from killpoint.harness.scenario import Expect, Scenario
from killpoint.harness.schedule import FaultSchedule, Tier

__all__ = ["PlanOptions", "PlannedRun"]


@dataclass(frozen=True)
class PlanOptions:
    """What shapes a plan besides what the runs showed (a campaign's options, in short)."""

    tier: Tier = "inprocess"
    seed: int = 0
    double_limit: int = 150  # paired crashes (and interleavings) per scenario; beyond: a sample
    double: bool = True
    interleave: bool = True  # in the in-process tier only…
    network: bool = True
    named: bool = True
    deploys: bool = False  # a deploy campaign's runs too (`deploy_plan`)
    real_pairs: bool = False  # …but for an engine of one worker per process, in the real tier
    lies: bool = True  # a sample of single crashes is told lying start messages (`harness.lies`)
    neighbours: bool = True  # a sample of runs beside neighbours (`neighbour_plan`)
    pauses: bool = True  # with the pairs: the first recoverer paused where it can act stale

    @property
    def pairs(self) -> bool:
        """Whether two workers recover at once: asked, and in the in-process tier (or the
        real tier's, for an engine of one worker per process)."""
        return self.interleave and (self.tier == "inprocess" or self.real_pairs)


@dataclass(frozen=True)
class PlannedRun:
    """One run of the plan: what to run, what kind of run it is, what else to judge it by."""

    scenario: Scenario
    kind: RunKind
    schedule: FaultSchedule
    expect: Expect | None = None  # a named case's expected recovery
    hit: HitRecord | None = None  # the recording's hit a single crash dies at
    risk: Risk | None = None  # a single crash's risk
