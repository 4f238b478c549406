"""A Jepsen-style timeline of one run, as geometry the HTML template draws in SVG.

Jepsen shows a history as one lane per process with fault periods shaded; a reader sees at a
glance which operation happened while which node was down. Here the lanes are the workers (their
boundary hits in order, the death marked), each neighbour that shared the run's world (its
requests, where they fell between the run's), the store (checkpoint commits by sequence) and
each service (requests from its journal, applied effects filled, network-faulted ones ringed).

There is no shared clock fine enough to order these (the injected clock stands still between
jumps), so the x axis is logical order: a hit records how many requests the services had seen
(`journal_seq`), which places every request between two hits. Checkpoint commits are paired
with `checkpoint.committed` hits in order; checkpoints written before any hit (the start
message) sit in the first column. Evidence refs from the verdicts are highlighted.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

from killpoint.fake_services.faults import FaultMode
from killpoint.fake_services.journal import AppliedEffect, RequestRecord
from killpoint.harness.history import History, NeighbourRecord, WorkerRecord
from killpoint.harness.results import EvidenceRef

LABEL_WIDTH = 150.0
TOP = 24.0
LANE_HEIGHT = 30.0
TARGET_WIDTH = 960.0
MIN_STEP = 6.0
MAX_STEP = 24.0
COMMITTED = "checkpoint.committed"
STEP_LABEL_CHAR_PX = 5.5  # width of one character of the 9px step labels
FAULT_OUTCOMES = frozenset(mode.value for mode in FaultMode)


@dataclass(frozen=True)
class Mark:
    x: float
    shape: str  # "tick" | "death" | "checkpoint" | "request" | "tamper"
    title: str
    classes: tuple[str, ...] = ()
    text: str = ""
    lift: int = 0  # a step label's row above the lane: 1 where names would run into each other


@dataclass
class Lane:
    name: str
    kind: str  # "worker" | "neighbour" | "store" | "service"
    y: float = 0.0
    marks: list[Mark] = field(default_factory=list)
    span: tuple[float, float] | None = None  # a worker's life, first to last hit
    evidence: bool = False
    title: str = ""


@dataclass(frozen=True)
class Band:
    x: float
    width: float
    kind: str  # "down": no live worker after a death; "net": a network-faulted request
    title: str
    label: str = ""


@dataclass(frozen=True)
class Timeline:
    width: float
    height: float
    step: float
    lanes: list[Lane]
    bands: list[Band]
    evidence_marks: int
    ends: list[str] = field(default_factory=list)  # each worker's end, with its reason


def worker_ends(history: History) -> list[str]:
    """`w1 error: ValueError: …`: how each worker ended and why, as its record says; what a
    lane's short name (`w1 error`) cannot hold."""
    ends = []
    for rec in sorted(history.workers, key=lambda w: w.worker):
        outcome = rec.end + (f" → {rec.status}" if rec.status else "")
        ends.append(f"w{rec.worker} {outcome}" + (f": {rec.reason}" if rec.reason else ""))
    return ends


@dataclass(frozen=True)
class _Grid:
    """The x axis: the column of each hit (by index) and each request (by journal seq)."""

    hit_col: dict[int, int]
    req_col: dict[int, int]
    columns: int
    step: float

    def x(self, col: float) -> float:
        """Rounded: a tenth of a pixel is invisible, and long decimals made most of a page."""
        return round(LABEL_WIDTH + (col + 0.5) * self.step, 1)


def _grid(history: History) -> _Grid:
    hit_col: dict[int, int] = {}
    req_col: dict[int, int] = {}
    theirs = [r for n in history.neighbours for r in n.requests]
    pending = sorted([*history.requests, *theirs], key=lambda r: r.seq)
    col = 1  # column 0 is the start message
    seen: set[int] = set()
    for i, hit in enumerate(history.hits):
        while pending and pending[0].seq <= hit.journal_seq:
            req_col[pending.pop(0).seq] = col
            col += 1
        if hit.worker not in seen and seen:
            col += 2  # room to shade the downtime before a new worker
        seen.add(hit.worker)
        hit_col[i] = col
        col += 1
    for request in pending:
        req_col[request.seq] = col
        col += 1
    step = round(max(MIN_STEP, min(MAX_STEP, TARGET_WIDTH / max(col, 1))), 2)
    return _Grid(hit_col, req_col, col, step)


def _applied_requests(
    applied: list[AppliedEffect], requests: list[RequestRecord]
) -> dict[int, int]:
    """Journal seq of the request behind each applied effect (effect seq -> request seq)."""
    matched: dict[int, int] = {}
    used: set[int] = set()
    keys = ("service", "operation", "fingerprint", "time")
    for effect in applied:
        for request in requests:
            seq = request.seq
            if seq not in used and all(getattr(request, k) == getattr(effect, k) for k in keys):
                matched[effect.seq] = seq
                used.add(seq)
                break
    return matched


def _refs(refs: list[EvidenceRef], kind: str) -> set[int]:
    return {r.index for r in refs if r.kind == kind}


def _cls(*names: str | None) -> tuple[str, ...]:
    return tuple(n for n in names if n)


def _request_title(r: RequestRecord) -> str:
    key = r.business_key or "-"
    return f"journal #{r.seq}: {r.service}.{r.operation} [{key}] → {r.outcome}"


def _fit_step_labels(lane: Lane) -> None:
    """Keep step names whole: where one would run into the next, every other name is lifted
    to a second row, and only a name that still does not fit is shortened (its full name on
    hover)."""
    labelled = [i for i, m in enumerate(lane.marks) if m.text]
    crowded = any(
        len(lane.marks[i].text) * STEP_LABEL_CHAR_PX > lane.marks[j].x - lane.marks[i].x
        for i, j in itertools.pairwise(labelled)
    )
    stride = 2 if crowded else 1
    for n, i in enumerate(labelled):
        mark = lane.marks[i]
        after = n + stride
        room = (lane.marks[labelled[after]].x - mark.x) if after < len(labelled) else 1e9
        chars = int(room / STEP_LABEL_CHAR_PX) - 1
        text = mark.text
        if len(text) > chars:
            text = text[: chars - 1] + "…" if chars >= 3 else ""
        lane.marks[i] = replace(mark, text=text, lift=n % 2 if crowded else 0)


def build_timeline(history: History, refs: list[EvidenceRef]) -> Timeline:
    grid = _grid(history)
    records = {w.worker: w for w in history.workers}
    lanes = _worker_lanes(history, records, _refs(refs, "worker"))
    evidence = _hit_marks(history, grid, lanes, records, refs)
    for lane in lanes.values():
        _fit_step_labels(lane)
    store = lanes.setdefault("store", Lane(name="store", kind="store", title="checkpoints"))
    evidence += _checkpoint_marks(history, grid, store, _refs(refs, "checkpoint"))
    evidence += _tamper_marks(history, grid, store, _refs(refs, "tamper"))
    bands, marked = _request_marks(history, grid, lanes, refs)
    evidence += marked
    bands += _down_bands(history, grid, records)
    ordered = [lane for lane in lanes.values() if lane.kind == "worker"]
    ordered += [_neighbour_lane(n, grid) for n in history.neighbours]
    ordered += [store] + [lane for lane in lanes.values() if lane.kind == "service"]
    for n, lane in enumerate(ordered):
        lane.y = round(TOP + n * LANE_HEIGHT + LANE_HEIGHT / 2, 1)
    return Timeline(
        width=round(LABEL_WIDTH + (grid.columns + 1) * grid.step, 1),
        height=TOP + len(ordered) * LANE_HEIGHT + 6,
        step=grid.step,
        lanes=ordered,
        bands=bands,
        evidence_marks=evidence,
        ends=worker_ends(history),
    )


def _worker_lanes(
    history: History, records: dict[int, WorkerRecord], worker_refs: set[int]
) -> dict[str, Lane]:
    """One lane per worker, named by how it ended."""
    lanes: dict[str, Lane] = {}
    for number in sorted({h.worker for h in history.hits} | set(records)):
        rec = records.get(number)
        title = ""
        if rec is not None:
            outcome = rec.end + (f" → {rec.status}" if rec.status else "")
            title = f"worker {number} ({rec.owner}): {outcome} {rec.reason}".strip()
        ended = (rec.status if rec.end == "stopped" and rec.status else rec.end) if rec else ""
        lanes[f"w{number}"] = Lane(
            name=f"w{number} {ended}".strip(),
            kind="worker",
            evidence=number in worker_refs,
            title=title,
        )
    return lanes


def _hit_marks(
    history: History,
    grid: _Grid,
    lanes: dict[str, Lane],
    records: dict[int, WorkerRecord],
    refs: list[EvidenceRef],
) -> int:
    """Each boundary hit on its worker's lane (a death where a killed worker hit last); the
    number of evidence marks placed."""
    hit_refs, worker_refs = _refs(refs, "hit"), _refs(refs, "worker")
    last_hit = {h.worker: i for i, h in enumerate(history.hits)}
    evidence = 0
    last_step: dict[int, str | None] = {}
    start = history.hits[0].time if history.hits else 0.0  # times from the first hit
    for i, hit in enumerate(history.hits):
        rec = records.get(hit.worker)
        new_step = hit.step is not None and last_step.get(hit.worker) != hit.step
        last_step[hit.worker] = hit.step
        dies = last_hit[hit.worker] == i and rec is not None and rec.end in ("killed", "sigkill")
        marked = i in hit_refs or (dies and hit.worker in worker_refs)
        evidence += marked
        lane = lanes[f"w{hit.worker}"]
        x = grid.x(grid.hit_col[i])
        lane.marks.append(
            Mark(
                x=x,
                shape="death" if dies else "tick",
                title=f"#{i} {hit.label()}"
                + (f" t+{hit.time - start:g}s" if hit.time > start else "")
                + (" — died here" if dies else ""),
                classes=_cls("hit", "death" if dies else None, "evidence" if marked else None),
                text=hit.step if new_step and hit.step else "",
            )
        )
        lane.span = (lane.span[0] if lane.span else x, x)
    return evidence


def _checkpoint_marks(history: History, grid: _Grid, store: Lane, cp_refs: set[int]) -> int:
    """Checkpoint commits paired in order with `checkpoint.committed` hits; those written
    before any hit (the start message) sit in the first column."""
    commits = [grid.hit_col[i] for i, h in enumerate(history.hits) if h.boundary == COMMITTED]
    checkpoints = sorted(history.checkpoints, key=lambda c: c.sequence)
    extra = len(checkpoints) - len(commits)
    cols = [0] * max(extra, 0) + commits[max(-extra, 0) :]
    evidence = 0
    for col, cp in zip(cols, checkpoints, strict=True):
        marked = cp.sequence in cp_refs
        evidence += marked
        store.marks.append(
            Mark(
                x=grid.x(col),
                shape="checkpoint",
                text=str(cp.sequence),
                title=f"checkpoint {cp.sequence}: {cp.state} ({cp.status})"
                + ("" if cp.trusted else " — untrusted"),
                classes=_cls(
                    "checkpoint", None if cp.trusted else "tampered", "evidence" if marked else None
                ),
            )
        )
    return evidence


def _tamper_marks(history: History, grid: _Grid, store: Lane, tamper_refs: set[int]) -> int:
    """Each tampering just after the last hit of the worker it followed."""
    worker_end = {h.worker: grid.hit_col[i] for i, h in enumerate(history.hits)}
    evidence = 0
    for t_index, tamper in enumerate(history.tampered):
        marked = t_index in tamper_refs
        evidence += marked
        store.marks.append(
            Mark(
                x=grid.x(worker_end.get(tamper.after_worker, 0) + 1),
                shape="tamper",
                title=f"tamper {tamper.kind} of checkpoint {tamper.sequence}",
                classes=_cls("tamper", "evidence" if marked else None),
            )
        )
    return evidence


def _request_marks(
    history: History, grid: _Grid, lanes: dict[str, Lane], refs: list[EvidenceRef]
) -> tuple[list[Band], int]:
    """Each request on its service's lane (filled if it applied an effect), a band over each
    network-faulted one; the bands and the number of evidence marks placed."""
    effect_of = _applied_requests(history.applied, history.requests)
    applied = set(effect_of.values())
    marked_requests = _refs(refs, "request") | {
        effect_of[e] for e in _refs(refs, "effect") if e in effect_of
    }
    bands: list[Band] = []
    evidence = 0
    for request in sorted(history.requests, key=lambda r: r.seq):
        seq = request.seq
        name = request.service
        lane = lanes.setdefault(name, Lane(name=name, kind="service", title=f"{name} journal"))
        faulted = request.outcome in FAULT_OUTCOMES
        marked = seq in marked_requests
        evidence += marked
        x = grid.x(grid.req_col[seq])
        lane.marks.append(
            Mark(
                x=x,
                shape="request",
                title=_request_title(request),
                classes=_cls(
                    "request",
                    "applied" if seq in applied else None,
                    "net-fault" if faulted else None,
                    "evidence" if marked else None,
                ),
            )
        )
        if faulted:
            title = f"network fault: {request.outcome} on journal #{seq}"
            label = request.outcome.replace("_", " ")
            bands.append(Band(x - grid.step / 2, grid.step, "net", title, label=label))
    return bands, evidence


def _neighbour_lane(neighbour: NeighbourRecord, grid: _Grid) -> Lane:
    """A neighbour's requests, each where it fell between the run's own (filled if applied)."""
    applied = set(_applied_requests(neighbour.applied, neighbour.requests).values())
    lane = Lane(
        name=f"{neighbour.tenant if neighbour.kind == 'tenant' else 'workflow'} "
        f"{neighbour.final_status}",
        kind="neighbour",
        title=f"{neighbour.kind} neighbour {neighbour.tenant}/{neighbour.workflow_id}, before "
        f"w{neighbour.before_worker}: {neighbour.final_status}",
    )
    for request in sorted(neighbour.requests, key=lambda r: r.seq):
        x = grid.x(grid.req_col[request.seq])
        lane.marks.append(
            Mark(
                x=x,
                shape="request",
                title=_request_title(request),
                classes=_cls("request", "applied" if request.seq in applied else None),
            )
        )
        lane.span = (lane.span[0] if lane.span else x, x)
    return lane


def _down_bands(history: History, grid: _Grid, records: dict[int, WorkerRecord]) -> list[Band]:
    """A band from each death to the next worker's first hit (or the end: no recovery)."""
    first_col: dict[int, int] = {}
    for i, hit in enumerate(history.hits):
        first_col.setdefault(hit.worker, grid.hit_col[i])
    worker_end = {h.worker: grid.hit_col[i] for i, h in enumerate(history.hits)}
    starts = sorted((col, worker) for worker, col in first_col.items())
    bands: list[Band] = []
    for worker, rec in records.items():
        if rec.end not in ("killed", "sigkill") or worker not in worker_end:
            continue
        died = worker_end[worker]
        later = [(col, w) for col, w in starts if col > died and w != worker]
        until = later[0][0] if later else grid.columns
        down_s = records[later[0][1]].started_at - rec.ended_at if later else None
        bands.append(
            Band(
                grid.x(died),
                grid.x(until) - grid.x(died),
                "down",
                f"w{worker} dead until the next worker starts",
                label=f"down {down_s:g}s" if down_s is not None else "no recovery",
            )
        )
    return bands
