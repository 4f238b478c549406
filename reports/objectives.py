"""Recovery objectives per scenario: the declared RPO and RTO, how many crashes kept within
each, the worst, and the runs that missed them (`harness.objectives` judges each run).

A miss is flagged, never counted as a violation. A scenario that declared no objective reads
"not declared": its crashes are measured (the worst is shown) but no share of them is called
within anything. Runs from results written before objectives were measured count as not
measured, so merged old and new shards still add up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict, computed_field

from killpoint.harness.objectives import CrashRecovery, RecoveryObjectives, RunObjectives
from killpoint.harness.results import CampaignResult, RunResult

MAX_LISTED = 25  # missing runs listed per scenario (all are counted)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True)


class ObjectiveFigures(_Model):
    """One objective of one scenario over its measured crashes."""

    declared: float | None  # the objective; None: not declared
    crashes: int
    within: int | None  # crashes that kept within it; None when not declared
    worst: float | None  # the worst crash's figure (None: none measured, or never back)
    unknown: int = 0  # crashes the engine did not show enough of to judge (no `step.begin`)
    never_back: int = 0  # crashes after which the run neither resumed nor stopped (RTO)
    runs_missed: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def within_share(self) -> float | None:
        return None if self.within is None or not self.crashes else self.within / self.crashes


class MissedRun(_Model):
    run_id: str
    label: str
    kind: str
    rpo: str
    rto: str
    lost_steps: int | None  # the worst crash of the run; None: the engine shows no steps
    recovery_s: float | None  # the slowest crash of the run; None: never back
    schedule_file: str | None


class ScenarioObjectives(_Model):
    scenario: str
    declared: RecoveryObjectives | None
    runs: int  # runs measured
    runs_with_crash: int
    rpo: ObjectiveFigures
    rto: ObjectiveFigures
    runs_missed: int  # runs that missed either objective
    missed: list[MissedRun]  # the first MAX_LISTED of them


class ObjectivesSummary(_Model):
    scenarios: list[ScenarioObjectives]
    declared: int  # scenarios that declare an objective
    crashes: int
    runs_missed_rpo: int
    runs_missed_rto: int
    runs_missed: int
    not_measured: int  # runs of results written before objectives were measured


def objectives_summary(result: CampaignResult) -> ObjectivesSummary:
    names = [s.scenario for s in result.scenarios]
    names += sorted({r.scenario for r in result.runs} - set(names))
    per = [scenario_objectives(n, [r for r in result.runs if r.scenario == n]) for n in names]
    return ObjectivesSummary(
        scenarios=per,
        declared=sum(s.declared is not None for s in per),
        crashes=sum(s.rpo.crashes for s in per),
        runs_missed_rpo=sum(s.rpo.runs_missed for s in per),
        runs_missed_rto=sum(s.rto.runs_missed for s in per),
        runs_missed=sum(s.runs_missed for s in per),
        not_measured=sum(r.objectives is None for r in result.runs),
    )


def scenario_objectives(scenario: str, runs: Sequence[RunResult]) -> ScenarioObjectives:
    measured = [(r, r.objectives) for r in runs if r.objectives is not None]
    judged = [o for _, o in measured]
    declared = next((o.declared for o in judged if o.declared is not None), None)
    crashes = [c for o in judged for c in o.crashes]
    missed = [(r, o) for r, o in measured if o.missed]
    back = [c.recovery_s for c in crashes if c.recovery_s is not None]
    return ScenarioObjectives(
        scenario=scenario,
        declared=declared,
        runs=len(judged),
        runs_with_crash=sum(bool(o.crashes) for o in judged),
        rpo=_figures(
            None if declared is None else declared.rpo_steps,
            crashes,
            [float(c.lost_steps) for c in crashes if c.lost_steps is not None],
            None if declared is None else declared.rpo_met,
            sum(o.rpo == "missed" for o in judged),
        ),
        rto=_figures(
            None if declared is None else declared.rto_s,
            crashes,
            back if len(back) == len(crashes) else [],
            None if declared is None else declared.rto_met,
            sum(o.rto == "missed" for o in judged),
        ).model_copy(update={"never_back": len(crashes) - len(back)}),
        runs_missed=len(missed),
        missed=[_missed(r, o) for r, o in missed[:MAX_LISTED]],
    )


def _figures(
    declared: float | None,
    crashes: list[CrashRecovery],
    values: list[float],
    met: Callable[[CrashRecovery], bool | None] | None,
    runs_missed: int,
) -> ObjectiveFigures:
    judged = [met(c) for c in crashes] if met is not None and declared is not None else []
    return ObjectiveFigures(
        declared=declared,
        crashes=len(crashes),
        within=None if declared is None else sum(j is True for j in judged),
        worst=max(values, default=None),
        unknown=sum(j is None for j in judged),
        runs_missed=runs_missed,
    )


def _missed(run: RunResult, objectives: RunObjectives) -> MissedRun:
    crashes = objectives.crashes
    back = [c.recovery_s for c in crashes]
    return MissedRun(
        run_id=run.run_id,
        label=run.label,
        kind=run.kind,
        rpo=objectives.rpo,
        rto=objectives.rto,
        lost_steps=max((c.lost_steps for c in crashes if c.lost_steps is not None), default=None),
        recovery_s=None if None in back else max((b for b in back if b is not None), default=0.0),
        schedule_file=run.schedule_file,
    )
