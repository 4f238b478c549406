"""A campaign's figures appended to a history file the user names, one build a line.

One campaign says how an engine fares today; a CI history says whether it is getting better.
`killpoint run --trend FILE` (or `merge --trend FILE`, for a sharded build) appends one JSON
line per build: when, the killpoint version, the engine, the commit, and the figures the report
draws across builds (`reports.trend_charts`). The file is the user's: it is read and checked
whole before a campaign starts, a bad line is one error naming the file and line, and it is only
ever appended to, never rewritten.
"""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from killpoint.contract.errors import KillpointError
from killpoint.harness.results import CampaignResult
from killpoint.reports.metrics import campaign_metrics

COMMIT_VARIABLES = ("GITHUB_SHA", "CI_COMMIT_SHA")  # GitHub Actions, GitLab CI
Count = Field(ge=0)


class TrendRecord(BaseModel):
    """One build's figures. Fields a later killpoint adds are ignored by this one."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    version: Literal[1] = 1
    when: datetime
    killpoint: str
    engine: str
    commit: str | None = None
    runs: int = Count
    violations: int = Count
    unknown: int = Count  # runs the oracle could not judge
    duplicate_effect_rate: float | None = Field(ge=0, le=1)  # None: no run could tell
    needs_review_rate: float | None = Field(ge=0, le=1)
    mutants_caught: int = Count
    mutants_hunted: int = Count
    wall_s: float = Field(ge=0)  # the campaign's duration

    @property
    def power(self) -> float | None:
        """The share of the mutants hunted that were caught; None when none were hunted."""
        return self.mutants_caught / self.mutants_hunted if self.mutants_hunted else None

    @property
    def runs_per_s(self) -> float | None:
        return self.runs / self.wall_s if self.wall_s > 0 else None


def killpoint_version() -> str:
    try:
        return version("killpoint")
    except PackageNotFoundError:  # a checkout run without installing it
        return "unknown"


def build_commit() -> str | None:
    """The commit being built: from the CI's variable, else `git rev-parse HEAD` here; None
    outside a repository or without git (a trend is kept all the same)."""
    for name in COMMIT_VARIABLES:
        if os.environ.get(name):
            return os.environ[name]
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def trend_record(result: CampaignResult, commit: str | None = None) -> TrendRecord:
    m = campaign_metrics(result)
    return TrendRecord(
        when=datetime.now(UTC),
        killpoint=killpoint_version(),
        engine=result.engine,
        commit=commit,
        runs=len(result.runs),
        violations=len(result.violations),
        unknown=sum(r.valid == "unknown" for r in result.runs),
        duplicate_effect_rate=m.duplicate_effects.value,
        needs_review_rate=m.needs_review.value,
        mutants_caught=sum(mu.caught for mu in result.mutants),
        mutants_hunted=len(result.mutants),
        wall_s=result.duration_s,
    )


def read_trend(path: str | Path) -> list[TrendRecord]:
    """Every record of the file, oldest first (none if it does not exist yet); anything else
    than records, one a line, is an error naming the file and the line."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise KillpointError(f"--trend {path}: cannot be read: {exc}") from None
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(TrendRecord.model_validate_json(line))
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in problem["loc"])
            reason = "not JSON" if problem["type"] == "json_invalid" else problem["msg"]
            reason = f"{where}: {reason}" if where else reason
            raise KillpointError(
                f"{path}:{number}: not a killpoint trend record ({reason}); "
                "fix or remove the line, the file is never rewritten"
            ) from None
    return records


def append_trend(path: str | Path, record: TrendRecord) -> list[TrendRecord]:
    """Check the file, append `record` as one line, and return every record, the new last."""
    path = Path(path)
    records = read_trend(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as out:
        # a line the user ended without a newline is not joined to ours
        start = b"\n" if out.tell() and not path.read_bytes().endswith(b"\n") else b""
        out.write(start + record.model_dump_json().encode() + b"\n")
    return [*records, record]
