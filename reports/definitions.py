"""What each figure of a campaign means, in one place: the report prints these beside the figures
and the documentation site's metrics page is generated from them, so the two cannot disagree.

A definition says what is counted, over which runs, and what a reader should not read into it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Definition:
    key: str  # the figure's name in `CampaignMetrics` (or the report's, where it has none there)
    title: str  # as the report heads it
    meaning: str  # what is counted, over which runs


METRICS: tuple[Definition, ...] = (
    Definition(
        "runs",
        "runs",
        "Fault schedules executed: each run is one workflow driven to its end through the "
        "schedule's faults, however many workers that took.",
    ),
    Definition(
        "violations",
        "violations",
        "Runs at least one checker judged false from the run's durable records. A run the "
        "checkers could not judge is unknown, not a violation.",
    ),
    Definition(
        "unknown",
        "unknown",
        "Runs no checker judged false but at least one could not judge, for want of evidence "
        "(an engine that keeps no history of what is asked, a record that cannot be read). "
        "Unknown is never counted as passed.",
    ),
    Definition(
        "resume_success",
        "resume success rate",
        "Of the runs with at least one death, those that recovered to a terminal state and that "
        "no checker judged false: a run that charged twice reached a terminal state, but it did "
        "not resume well.",
    ),
    Definition(
        "duplicate_effects",
        "duplicate side-effect rate",
        "Of all runs, those in which a downstream service applied one intended effect more than "
        "once, as the services' own journals record it.",
    ),
    Definition(
        "unresolved_effect_age_s",
        "unresolved effect age",
        "Over the runs that ended with an effect whose outcome is still unknown (sent, no "
        "receipt, not reconciled): the injected-clock seconds from its sending to the run's end. "
        "The count is of such runs, not of all runs.",
    ),
    Definition(
        "recovery_time_clock",
        "recovery time (clock)",
        "Over the runs that resumed after a death: injected-clock seconds from the first death "
        "to the run's end, downtime and lease waits included. Clock jumps make its tail long; "
        "the percentiles describe the body.",
    ),
    Definition(
        "recovery_time_wall",
        "recovery time (wall)",
        "Over the runs that resumed after a death: the harness's own wall-clock seconds from the "
        "first death to the run's end (what the recovery cost to compute, not to wait).",
    ),
    Definition(
        "recovery_steps",
        "recovery steps",
        "Over the runs that resumed after a death: boundary hits from the first death to the "
        "run's end.",
    ),
    Definition(
        "checkpoints_per_successful_run",
        "checkpoints per successful run",
        "Over the runs that completed and that no checker judged false: checkpoints committed.",
    ),
    Definition(
        "storage_per_workflow",
        "storage per workflow",
        "Rows and bytes the engine's store holds at a run's end, averaged over runs whose "
        "engine reports its store's size.",
    ),
    Definition(
        "storage_per_step",
        "storage per step",
        "The store's rows and bytes at a run's end divided by the steps the run executed.",
    ),
    Definition(
        "migration_failures",
        "schema-migration failures",
        "Checkpoints an engine could not upgrade from an older schema, and the runs they stopped; "
        "refusing an unsafe legacy checkpoint is expected, and counted so.",
    ),
    Definition(
        "needs_review",
        "needs review",
        "Of all runs, those that ended in `needs_review`: the engine stopped and asked a person "
        "to settle an effect it could not settle itself.",
    ),
    Definition(
        "manual_intervention",
        "manual intervention",
        "Of all runs, those that ended waiting for a person, whatever the reason: "
        "`needs_review`, `quarantined`, `budget_exhausted` and `dead_lettered` alike. It counts "
        "the runs the operator queue lists.",
    ),
    Definition(
        "within_budget",
        "resumes within original budget",
        "Of the runs that resumed after a death, those whose spending (tokens, cost, tool calls) "
        "stayed within the budget the run started with.",
    ),
    Definition(
        "coverage",
        "boundaries crashed",
        "Of the boundaries the recording runs discovered, those at least one run crashed at.",
    ),
    Definition(
        "mutation_score",
        "mutants caught",
        "Of the mutant engines hunted (the reference engine with one of the seeds' mistakes), "
        "those at least one run judged false: the harness's power.",
    ),
    Definition(
        "objectives",
        "recovery objectives",
        "Each crash measured against its scenario's declared RPO (work lost) and RTO (time to "
        "recover); a miss is flagged, not a violation.",
    ),
    Definition(
        "runs_per_s",
        "runs per second",
        "The campaign's runs divided by its wall-clock duration (a `--mutants` hunt's runs and "
        "time not included): drawn across builds in the report's Trends, where a fall says the "
        "engine or the plan got slower.",
    ),
)


def definition(key: str) -> Definition:
    """The definition of `key`; a KeyError names the known keys."""
    for known in METRICS:
        if known.key == key:
            return known
    raise KeyError(f"no definition of {key!r}; known: {', '.join(d.key for d in METRICS)}")
