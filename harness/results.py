"""What a campaign produces: verdicts per run, raw measures, coverage, mutant scores.

This is the only thing reports read. It is plain pydantic so shards can be written as JSON on
different machines and merged into one report.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from killpoint.harness.history import History
from killpoint.harness.loading import MAX_SECONDS as MAX_SECONDS
from killpoint.harness.loading import Count, Seconds, Version1, load_json
from killpoint.harness.objectives import RunObjectives
from killpoint.harness.schedule import FaultSchedule

Valid = bool | Literal["unknown"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class EvidenceRef(_Model):
    """Points into a history: a service request (journal seq), a checkpoint (sequence),
    a boundary hit (index in `History.hits`) or a worker (number)."""

    kind: Literal["request", "checkpoint", "hit", "worker", "effect", "tamper"]
    index: Count


class Verdict(_Model):
    checker: str
    valid: Valid
    summary: str = ""
    evidence: list[str] = []
    refs: list[EvidenceRef] = []


def combine(verdicts: list[Verdict]) -> Valid:
    """Jepsen's rule: false beats unknown beats true."""
    if any(v.valid is False for v in verdicts):
        return False
    if any(v.valid == "unknown" for v in verdicts):
        return "unknown"
    return True


class RunMeasures(_Model):
    """Raw measures of one run; campaign metrics are aggregated from these."""

    deaths: Count = 0
    workers: Count = 0
    resumed: bool = False  # at least one worker started after a death
    recovered: bool = False  # resumed and reached a terminal state
    recovery_steps: Count = 0  # boundary hits from the first death to the end
    recovery_clock_s: Seconds = 0.0  # injected-clock time from the first death to the end
    recovery_wall_s: Seconds = 0.0
    checkpoints: Count = 0
    steps: Count = 0
    store_rows: Count = 0
    store_bytes: Count = 0
    duplicate_effects: Count = 0
    downstream_attempts: Count = 0
    needs_review: bool = False
    within_budget: bool = True
    unresolved_effect_age_s: Seconds | None = None
    migration_failures: Count = 0
    # a deploy campaign's run: its strategy and how the run came through (`deploy_outcome`)
    deploy_strategy: str | None = None
    deploy_outcome: str | None = None
    wall_s: Seconds | None = None  # the run's whole wall time, all workers; None in older files


RunKind = Literal[
    "clean",
    "single",
    "double",
    "pair",
    "network",
    "named",
    "deploy",
    "generated",
    "replay",
    "real",  # a single crash of the real-tier pass (`harness.campaign.real_pass`)
]


class RunResult(_Model):
    run_id: str
    scenario: str
    kind: RunKind
    label: str
    schedule: FaultSchedule
    final_status: str
    final_state: str
    final_reason: str = ""
    crashed_at: list[str] = []  # boundary labels this run crashed at (coverage)
    controls: list[str] = []  # what a named case's operator did, refusals too (the report)
    verdicts: list[Verdict]
    valid: Valid
    measures: RunMeasures
    schedule_file: str | None = None
    # kept for violations and (a bounded number of) runs in doubt, where the report draws a
    # timeline: unknown, or ended waiting for a person
    history: History | None = None
    # each crash measured against the scenario's recovery objectives; None in results written
    # before objectives were measured (they merge all the same, as not measured)
    objectives: RunObjectives | None = None


class ScenarioCoverage(_Model):
    scenario: str
    boundaries_discovered: list[str]
    boundaries_crashed: list[str]
    runs: Count
    violations: Count
    outcome_by_boundary: dict[str, str] = {}  # label -> "ok" | "violation" | a final status


class MutantResult(_Model):
    mutant: str
    description: str = ""
    caught: bool
    checker: str | None = None
    runs_to_detection: Count | None = None
    # what found it: the systematic plan, or the exploration's generated schedules
    found_by: Literal["plan", "exploration"] | None = None
    seconds_to_detection: Seconds | None = None  # the hunt's wall time up to the catching run
    schedule: FaultSchedule | None = None
    # the run that caught it: its evidence, saved schedule file and history (the report's
    # timeline and replay command); None for an escaped mutant
    run: RunResult | None = None

    @property
    def schedule_file(self) -> str | None:
        return self.run.schedule_file if self.run else None


class ExpectedCatch(_Model):
    """A campaign a test ran with `fail_on_violation=False` to show the oracle catches a broken
    engine, and whose test passed: its violations are what the test expected, the oracle's
    power shown, not the session's failure. Only this summary of it enters the session's
    report, so the broken engine's runs count in none of its figures."""

    test: str  # the pytest node id
    engine: str
    scenarios: list[str]
    runs: Count
    violating: Count  # runs judged false
    checkers: dict[str, Count]  # checker -> runs it judged false
    first: RunResult  # the first violating run: evidence, schedule file, history

    @classmethod
    def of(cls, test: str, result: CampaignResult) -> ExpectedCatch:
        bad = result.violations
        checkers = Counter(v.checker for r in bad for v in r.verdicts if v.valid is False)
        return cls(
            test=test,
            engine=result.engine,
            scenarios=[s.scenario for s in result.scenarios],
            runs=len(result.runs),
            violating=len(bad),
            checkers=dict(checkers.most_common()),
            first=bad[0],
        )


class CampaignResult(_Model):
    version: Version1 = 1
    engine: str
    lacks: list[str] = Field(default_factory=list)  # what the engine keeps not: checks unknown
    tier: str
    backend: str
    seed: int = Field(default=0, ge=-(2**63), le=2**63 - 1)
    profile: str = "default"
    shard: str | None = None
    started_at: str
    duration_s: Seconds = 0.0  # the campaign's (with shards, the longest shard's)
    # the whole job's, from start to summary: the campaign and its mutant hunts (`run
    # --mutants`); merged shards, the longest's; None where no command timed it (a file from
    # before, the plugin)
    wall_s: Seconds | None = None
    scenarios: list[ScenarioCoverage]
    runs: list[RunResult]
    mutants: list[MutantResult] = Field(default_factory=list)
    caught_as_expected: list[ExpectedCatch] = Field(default_factory=list)
    # what the report's header names; None in files written before they were kept
    killpoint_version: str | None = None
    engine_version: str | None = None  # the version of the distribution that provides it
    command: list[str] | None = None  # the command line that launched the campaign
    campaign_dir: str | None = None  # its folder, as launched: where its queue is kept

    @property
    def violations(self) -> list[RunResult]:
        return [r for r in self.runs if r.valid is False]


def load_result(path: str | Path) -> CampaignResult:
    """Read a result file (`run --out`); a clear `KillpointError` for anything that is not one."""
    return load_json(path, CampaignResult, "campaign result")


def hunt_report(mutants: list[MutantResult], duration_s: float = 0.0) -> CampaignResult:
    """A campaign result made of hunts alone: the mutant table, each caught engine with the run
    that caught it. It has no runs of its own: a caught mutant is the harness passing, not a
    violation of the session."""
    from datetime import UTC, datetime

    return CampaignResult(
        engine="mutant hunt",
        tier="inprocess",
        backend="sqlite",
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
        duration_s=duration_s,
        scenarios=[],
        runs=[],
        mutants=mutants,
    )
