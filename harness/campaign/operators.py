"""The exploration's operators: each control an engine offers, on runs its faults stopped, under
further faults.

Seed 000: "Manual controls should be narrow: reconcile, retry with the same key, compensate,
request approval, branch, or terminate", and "a recovery failure should enter an operator queue
with enough evidence to act". A person acts on runs that faults left in doubt or stopped, and
a control is work like any other: its process can die half way, and the next worker finds the
run where the control left it. So, past the plan and the exploration, for the runs a campaign's
faults stopped for a person (by their durable end: `operator.QUEUED`), at most `STOPS` distinct
stops per scenario, taken in a fixed order (the recording, the named cases, the exploration's
runs, so a shard that explores a scenario finds what one process finds), this search:

1. applies each control the engine offers (an `OperatedEngine`; none that needs what the
   workflow lacks: an approval gate, a compensating step) to the stop: the stop's own schedule
   with the control named (`FaultSchedule.controls`), which the runner's operator applies in
   the worker whose run stopped (`harness.operator`);
2. for a control that acted, crashes that worker at hits the control reached, counted by the
   kill-switch past the worker's hits up to the stop: the first (inside the control), the
   first send of an effect (a retry's), the last (after the control and what followed it);
   and crashes the next worker too, in the middle of its own recovery.

Every run is judged by the whole oracle, like the engine's own: one effect per operation, the
same key on a retry (a second effect where the service applied one), a legal, fenced lineage,
the audit trail of what the operator did (`checkers.durable`). A violation ends the search: its
schedule is small already (one stop, one control, at most two crashes). Deterministic for a
campaign: every decision is drawn from the runs' histories alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from killpoint.contract.workflow import StepKind, Workflow
from killpoint.harness.history import History, HitRecord
from killpoint.harness.operator import CONTROLS, QUEUED
from killpoint.harness.protocol import EngineSpec, OperatedEngine
from killpoint.harness.results import RunResult
from killpoint.harness.scenario import Scenario
from killpoint.harness.schedule import FaultSchedule, HitPoint

if TYPE_CHECKING:
    from killpoint.harness.campaign.execute import Campaign

STOPS = 2  # distinct stops per scenario a search acts on
MORE_WORKERS = 3  # room after the stop: a crash in the control's worker, one in the next, a rest
SENDS = frozenset({"effect.started", "transport.response_received"})  # a control's send
IN_DOUBT = frozenset({"started", "unknown", "needs_review"})  # a ledger row's unproven outcome
Judge = Callable[[Scenario, FaultSchedule], tuple[RunResult, History]]
Probe = Callable[[FaultSchedule], History]


def offered(engine: EngineSpec) -> tuple[str, ...]:
    """The controls the engine's workers may take: all six for a worker class that is an
    `OperatedEngine`, none for one that is not; a plain factory is tried (a run whose operator
    could not act on it says so, and the search stops)."""
    factory = engine.factory
    if isinstance(factory, type):
        return CONTROLS if issubclass(factory, OperatedEngine) else ()
    return CONTROLS


def meaningful(controls: Sequence[str], workflow: Workflow) -> tuple[str, ...]:
    """The controls that can mean something for `workflow`: no approval request without a gate,
    no compensation without a compensating step, whatever the engine."""
    kinds = {t.step.kind for t in workflow.transitions}
    needs = {"request-approval": StepKind.APPROVAL, "compensate": StepKind.COMPENSATE}
    return tuple(c for c in controls if c not in needs or needs[c] in kinds)


@dataclass(frozen=True)
class Stop:
    """A run its faults stopped for a person: its schedule, the worker whose run stopped (the
    one the runner's operator acts in), how many hits that worker made up to the stop, whether
    an effect is in doubt, and the controls the engine's queue allows it (None: not said)."""

    schedule: FaultSchedule
    worker: int
    hits: int
    status: str
    in_doubt: bool
    allowed: tuple[str, ...] | None = None

    @property
    def key(self) -> tuple[str, bool]:
        """What makes two stops alike to a person: why it waits, and whether in doubt."""
        return (self.status, self.in_doubt)

    @classmethod
    def of(cls, history: History) -> Stop | None:
        s = history.schedule
        if s.controls or s.interleave is not None or history.final_status not in QUEUED:
            return None
        worker = next(
            (w.worker for w in history.workers if w.end == "stopped" and w.status in QUEUED),
            None,
        )
        if worker is None:
            return None
        queued = history.queued
        doubts = [e for e in history.effects if e.status.value in IN_DOUBT]
        allowed = None if queued is None or queued.controls is None else tuple(queued.controls)
        hits = sum(1 for h in history.hits if h.worker == worker)
        in_doubt = bool(doubts or (queued and queued.in_doubt))
        return cls(s, worker, hits, history.final_status, in_doubt, allowed)


@dataclass
class OperatorSearch:
    """The operators of one scenario: its stops, found among `candidates` (a schedule and its
    stop when this process saw it), each control on each, crashes after. `only` narrows it to
    some controls, on the stops with an effect in doubt (a hunt's early pass)."""

    scenario: Scenario
    judge: Judge
    probe: Probe  # a run that is not kept, for a candidate this process did not make
    candidates: Iterable[tuple[FaultSchedule, Stop | None]]
    controls: tuple[str, ...]
    label: str = "0"
    crashes: bool = True  # further faults after each control that acted
    only: tuple[str, ...] | None = None
    probing: bool = False  # whether the engine's workers offer controls is learnt by trying
    runs: int = 0
    stops: list[Stop] = field(default_factory=list)
    done: bool = False  # it has run: `runs` is what it made

    def chosen(self) -> tuple[str, ...]:
        """The controls it applies on each stop."""
        controls = meaningful(self.controls, self.scenario.workflow)
        return controls if self.only is None else tuple(c for c in controls if c in self.only)

    def expected_runs(self) -> int:
        """What it made once it has run; before, a guess for a progress bar's total: each
        control once on each stop it may find (the crashes after a control that acted are
        not known before it acts)."""
        return self.runs if self.done else STOPS * len(self.chosen())

    def run(self) -> Iterator[RunResult]:
        """Each run it makes, in order; it ends after the first violation."""
        try:
            yield from self._search(self.chosen())
        finally:
            self.done = True

    def _search(self, controls: tuple[str, ...]) -> Iterator[RunResult]:
        for stop in self.find_stops():
            for control in controls:
                result, history = self._judge(stop, control, ())
                yield result
                if result.valid is False:
                    return
                if self.probing and not (history.controls or history.audit):
                    return  # a plain factory's workers took no control: they offer none
                if self.crashes and control in history.controls_applied:
                    for result in self._after(stop, control, history):
                        yield result
                        if result.valid is False:
                            return

    def find_stops(self) -> list[Stop]:
        """Distinct stops among the candidates, one of each kind (`Stop.key`), those with an
        effect in doubt first, at most `STOPS`; none whose engine's queue allows no control
        (a person reading it would not act) and, with `only`, none without a doubt."""
        found: dict[tuple[str, bool], Stop] = {}
        for schedule, stop in self.candidates:
            if stop is None:
                stop = Stop.of(self.probe(schedule))
            if stop is None or stop.key in found or stop.allowed == ():
                continue
            if self.only is None or stop.in_doubt:
                found[stop.key] = stop
        ranked = sorted(found.values(), key=lambda stop: not stop.in_doubt)
        self.stops = ranked[:STOPS]
        return self.stops

    def _after(self, stop: Stop, control: str, history: History) -> Iterator[RunResult]:
        """The worker that applied `control` killed at hits it reached, then the next one."""
        mine = [h for h in history.hits if h.worker == stop.worker][stop.hits :]
        for n, hit in enumerate(_crash_points(mine)):
            result, crashed = self._judge(stop, control, (_point(hit),))
            yield result
            if n or result.valid is False:
                continue
            later = [h for h in crashed.hits if h.worker == stop.worker + 1]
            if later:
                middle = later[len(later) // 2]
                result, _ = self._judge(stop, control, (_point(hit), _point(middle)))
                yield result

    def _judge(
        self, stop: Stop, control: str, crashes: tuple[HitPoint, ...]
    ) -> tuple[RunResult, History]:
        self.runs += 1
        s = stop.schedule
        schedule = s.model_copy(
            update={
                # the stop's own draws of the services' faults and realism, under a name of its own
                "network": s.network.seeded(s.run_id),
                "run_id": f"operator-{self.label}-{self.runs}",
                "controls": (control,),
                "crashes": (*s.crashes, *crashes),
                "max_workers": min(100, max(s.max_workers, stop.worker + 1) + MORE_WORKERS),
            }
        )
        return self.judge(self.scenario, schedule)


def _crash_points(hits: Sequence[HitRecord]) -> list[HitRecord]:
    """Where to kill the worker that applied a control, among the hits it made from the control
    on: the first, the first send of an effect, the last; each once."""
    if not hits:
        return []
    send = next((h for h in hits if h.boundary in SENDS), None)
    chosen = [hits[0], *([send] if send is not None else []), hits[-1]]
    unique: list[HitRecord] = []
    for hit in chosen:
        if hit not in unique:
            unique.append(hit)
    return unique


def _point(hit: HitRecord) -> HitPoint:
    return HitPoint(
        worker=hit.worker, step=hit.step, boundary=hit.boundary, occurrence=hit.occurrence
    )


# -- a campaign's searches --------------------------------------------------------------------

SOURCES = frozenset({"clean", "named", "generated"})  # kinds of runs every shard finds alike


def remember(cache: dict[tuple[str, str], Stop], kind: str, history: History) -> None:
    """Keep the stop of a run of a kind a search looks at, if it stopped for a person."""
    stop = Stop.of(history) if kind in SOURCES else None
    if stop is not None:
        cache[(history.scenario, history.schedule.run_id)] = stop


def candidates(
    scenario: Scenario, campaign: Campaign, explored: bool = True
) -> Iterator[tuple[FaultSchedule, Stop | None]]:
    """Where a scenario's stops may be, in an order every shard shares: its recording, its named
    cases (when the campaign makes them), then (`explored`) the exploration's runs; each with
    its stop when this process saw it. A run this process made that did not stop for a person
    is passed over."""
    from killpoint.harness.campaign.plan import clean

    name = scenario.name
    made = {r.run_id: r for r in campaign.runs if r.scenario == name}
    cases = scenario.cases if campaign.config.named else ()  # only the phases asked for
    ordered = [clean(scenario).schedule, *(case.schedule for case in cases)]
    if explored:
        ordered += [
            r.schedule for r in made.values() if r.kind == "generated" and not r.schedule.controls
        ]
    for schedule in ordered:
        result = made.get(schedule.run_id)
        stop = campaign.stopped.get((name, schedule.run_id))
        if result is not None and stop is None:
            continue
        yield schedule, stop


def searches(
    campaign: Campaign,
    scenarios: Sequence[Scenario],
    *,
    crashes: bool = True,
    explored: bool = True,
    only: tuple[str, ...] | None = None,
    label: str = "",
) -> list[OperatorSearch]:
    """The operator searches of the scenarios this shard explores (every n-th, as the
    exploration's), none when the campaign's operators are off or its engine takes no
    control."""
    from killpoint.harness.campaign.execute import run_in_tier

    config = campaign.config
    controls = offered(config.engine)
    if not config.operators or not controls:
        return []
    index, total = config.shard or (1, 1)

    def probe(scenario: Scenario) -> Probe:
        def run(schedule: FaultSchedule) -> History:
            update = {"tier": config.tier, "engine": config.engine.ref}
            fixed = schedule.model_copy(update=update)
            return run_in_tier(campaign.world, scenario, fixed, config.engine)

        return run

    return [
        OperatorSearch(
            s,
            campaign.judge,
            probe(s),
            candidates(s, campaign, explored),
            controls,
            label=f"{k}{label}",
            crashes=crashes,
            only=only,
            probing=not isinstance(config.engine.factory, type),
        )
        for k, s in enumerate(scenarios)
        if k % total == index - 1
    ]
