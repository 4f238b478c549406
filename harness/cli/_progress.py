"""Progress of a campaign and its mutant hunts, on stderr: a bar on a terminal, lines off one.

The campaign tells how many runs it will make (`CampaignConfig.on_plan`: a close count once
the recordings are in, exact by the end) and each run it made; the hunts, how many engines they
hunt and each one caught or not. On a terminal, rich draws a bar per phase with the count
made of the total, the violations (or catches) so far, the time spent and the time left, and
clears it before the summary. Off a terminal — a CI log, where a bar shows nothing until the
end — a plain line is written each `STEP` of the total or after `PERIOD` seconds without one,
whichever comes first. `--quiet` shows neither.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import typer
from rich import progress as rich_progress
from rich.console import Console

from killpoint.harness.results import RunResult

PERIOD = 10.0  # seconds off a terminal without a line, at most
STEP = 0.1  # of the total: off a terminal, a line each time another tenth is done
Clock = Callable[[], float]


@dataclass
class Phase:
    """What one phase has done: the campaign's runs, then the mutant hunts."""

    noun: str  # what is counted: "runs", "mutants hunted"
    adjective: str  # what is counted among them: "violating", "caught"
    started: float
    total: int | None = None  # unknown until the campaign has made its recordings
    done: int = 0
    marked: int = 0  # violating runs, mutants caught

    def shown_total(self) -> int | None:
        """The total, never below what is done (a count the campaign guessed low)."""
        return None if self.total is None else max(self.total, self.done)


class Progress:
    """The counts of the phase under way, shown by nothing (`--quiet`); a subclass shows them."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self.clock = clock
        self.phase = Phase("runs", "violating", clock())

    def planned(self, total: int) -> None:
        self.phase.total = total
        self.show()

    def ran(self, result: RunResult) -> None:
        self.phase.done += 1
        self.phase.marked += result.valid is False
        self.show()

    def hunting(self, engines: int) -> None:
        self.finished()
        self.phase = Phase("mutants hunted", "caught", self.clock(), total=engines)
        self.started()

    def hunted(self, caught: bool) -> None:
        self.phase.done += 1
        self.phase.marked += caught
        self.show()

    def started(self) -> None:
        """A new phase began."""

    def finished(self) -> None:
        """The phase under way is over: its last counts are its final ones."""

    def show(self) -> None:
        """The counts changed."""

    def close(self) -> None:
        """The campaign is over: the summary follows."""


class Lines(Progress):
    """Off a terminal: a line now and then, as a CI log wants it."""

    def __init__(self, write: Callable[[str], None], clock: Clock = time.monotonic) -> None:
        super().__init__(clock)
        self.write = write
        self.last_line, self.last_step, self.last_done = self.phase.started, 0, 0

    def started(self) -> None:
        self.last_line, self.last_step, self.last_done = self.phase.started, 0, 0

    def show(self) -> None:
        p, now = self.phase, self.clock()
        total = p.shown_total()
        step = int(p.done / total / STEP) if total else 0
        if p.done and (step > self.last_step or now - self.last_line >= PERIOD):
            self._write(now, step)

    def finished(self) -> None:
        # a total guessed low reaches 100 % before the last runs: the log ends on the true count
        if self.phase.done != self.last_done:
            self._write(self.clock(), self.last_step)

    def close(self) -> None:
        self.finished()

    def _write(self, now: float, step: int) -> None:
        self.write(line(self.phase, now))
        self.last_line, self.last_step, self.last_done = now, step, self.phase.done


def line(phase: Phase, now: float) -> str:
    """`killpoint: 120/1820 runs (6%), 3 violating, 0:12 spent, about 2:54 left`."""
    spent = now - phase.started
    total = phase.shown_total()
    counted = f"{phase.done} {phase.noun}"
    times = f"{_clock(spent)} spent"
    if total:
        counted = f"{phase.done}/{total} {phase.noun} ({100 * phase.done // total}%)"
        if phase.done < total:
            times += f", about {_clock(spent * (total - phase.done) / phase.done)} left"
    return f"killpoint: {counted}, {phase.marked} {phase.adjective}, {times}"


def _clock(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}:{secs:02d}"


class Bar(Progress):
    """On a terminal: rich's bar, one per phase, cleared when the campaign is over."""

    def __init__(self, console: Console, clock: Clock = time.monotonic) -> None:
        super().__init__(clock)
        self.bar = rich_progress.Progress(
            rich_progress.TextColumn("{task.description}"),
            rich_progress.BarColumn(),
            rich_progress.MofNCompleteColumn(),
            rich_progress.TextColumn("{task.fields[marked]}"),
            rich_progress.TimeElapsedColumn(),
            rich_progress.TextColumn("spent"),
            rich_progress.TimeRemainingColumn(),
            rich_progress.TextColumn("left"),
            console=console,
            transient=True,
        )
        self.bar.start()
        self.task = self._task()

    def _task(self) -> rich_progress.TaskID:
        p = self.phase
        return self.bar.add_task(p.noun, total=p.total, marked=f"{p.marked} {p.adjective}")

    def started(self) -> None:
        self.bar.update(self.task, visible=False)
        self.task = self._task()

    def show(self) -> None:
        p = self.phase
        self.bar.update(
            self.task,
            total=p.shown_total(),
            completed=p.done,
            marked=f"{p.marked} {p.adjective}",
        )

    def close(self) -> None:
        self.bar.stop()


def progress(quiet: bool) -> Progress:
    """What `killpoint run`, `mutants` and `hunt` show while they work (the module's docstring)."""
    if quiet:
        return Progress()
    console = Console(stderr=True)
    if console.is_terminal:
        return Bar(console)
    return Lines(lambda text: typer.echo(text, err=True))
