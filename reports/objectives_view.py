"""The report's recovery-objectives section: each scenario's declared RPO and RTO, the share of
crashes within each, the worst, and the runs that missed them with their replay commands.

Its words are decided here, so the template only lays them out: "not declared" for an objective
no one set (never a pass), "never" for a run that neither resumed nor stopped after a crash.
"""

from __future__ import annotations

from dataclasses import dataclass

from killpoint.harness.objectives import RunObjectives
from killpoint.harness.results import CampaignResult, RunResult
from killpoint.reports.charts import fmt
from killpoint.reports.embedded import replay_for
from killpoint.reports.figures import percent
from killpoint.reports.objectives import (
    MissedRun,
    ObjectiveFigures,
    ObjectivesSummary,
    ScenarioObjectives,
)

NOT_DECLARED = "not declared"


@dataclass(frozen=True)
class MissView:
    missed: MissedRun
    what: str  # "RTO", "RPO" or "RPO and RTO"
    figures: str  # "lost 4 steps, back after 7,200 s"
    run: RunResult
    replay: str | None  # its schedule is in the page's archive, under the name this gives


@dataclass(frozen=True)
class ObjectivesView:
    scenario: str
    rows: list[tuple[str, str, str, str]]  # (objective, declared, within, worst)
    state: str  # "good" | "warn" | "neutral": met, missed, or nothing judged
    runs_missed: int
    misses: list[MissView]
    unlisted: int  # misses counted but not listed


def steps(value: float | None) -> str:
    return "n/a" if value is None else f"{fmt(value)} step" + ("" if value == 1 else "s")


def seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{fmt(value)} s"


def within(figures: ObjectiveFigures) -> str:
    if figures.within is None:
        return NOT_DECLARED
    unknown = f", {figures.unknown} unknown" if figures.unknown else ""
    return (
        f"{percent(figures.within_share)} ({figures.within} of {figures.crashes} crashes{unknown})"
    )


def _rows(s: ScenarioObjectives) -> list[tuple[str, str, str, str]]:
    rpo, rto = s.rpo, s.rto
    worst_rto = seconds(rto.worst)
    if rto.never_back:
        worst_rto = f"never back after {rto.never_back} crash" + "es" * (rto.never_back > 1)
    return [
        (
            "RPO (steps redone)",
            NOT_DECLARED if rpo.declared is None else steps(rpo.declared),
            within(rpo),
            steps(rpo.worst),
        ),
        (
            "RTO (crash to resumed or stopped)",
            NOT_DECLARED if rto.declared is None else seconds(rto.declared),
            within(rto),
            worst_rto,
        ),
    ]


def _miss(missed: MissedRun, run: RunResult) -> MissView:
    what = " and ".join(n for n, v in (("RPO", missed.rpo), ("RTO", missed.rto)) if v == "missed")
    back = "never back" if missed.recovery_s is None else f"back after {seconds(missed.recovery_s)}"
    lost = "an unknown number of steps" if missed.lost_steps is None else steps(missed.lost_steps)
    return MissView(missed, what, f"lost {lost}, {back}", run, replay_for(run))


def objective_views(result: CampaignResult, summary: ObjectivesSummary) -> list[ObjectivesView]:
    """One view per scenario of the campaign, each missing run with its schedule."""
    runs = {(r.scenario, r.run_id): r for r in result.runs}
    views = []
    for s in summary.scenarios:
        judged = s.declared is not None and s.runs_with_crash > 0
        views.append(
            ObjectivesView(
                scenario=s.scenario,
                rows=_rows(s),
                state=("warn" if s.runs_missed else "good") if judged else "neutral",
                runs_missed=s.runs_missed,
                misses=[_miss(m, runs[(s.scenario, m.run_id)]) for m in s.missed],
                unlisted=s.runs_missed - len(s.missed),
            )
        )
    return views


def console_figure(summary: ObjectivesSummary) -> str:
    """The summary line's words: the runs that missed each objective, or why none is judged."""
    if not summary.declared:
        return "recovery objectives not declared"
    return (
        f"objectives missed: RPO {summary.runs_missed_rpo} runs, RTO {summary.runs_missed_rto} runs"
    )


def run_line(judged: RunObjectives) -> str:
    """A replayed run's objectives in one line: each verdict, the worst crash, what was declared."""
    crashes, declared = judged.crashes, judged.declared
    lost = max((c.lost_steps for c in crashes if c.lost_steps is not None), default=None)
    backs = [c.recovery_s for c in crashes]
    back = "never back" if None in backs else seconds(max((b or 0.0 for b in backs), default=0.0))
    rpo = None if declared is None else declared.rpo_steps
    rto = None if declared is None else declared.rto_s
    words = {"not_declared": NOT_DECLARED, "no_crash": "no crash"}
    return (
        f"objectives: RPO {words.get(judged.rpo, judged.rpo)} "
        f"(worst {'unknown' if lost is None else steps(lost)} redone"
        f"{'' if rpo is None else f', declared {steps(rpo)}'}) · "
        f"RTO {words.get(judged.rto, judged.rto)} (worst {back}"
        f"{'' if rto is None else f', declared {seconds(rto)}'})"
    )
