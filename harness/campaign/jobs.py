"""A campaign over several processes: one shard per core, merged into one result.

A campaign's runs are independent and a CI runner has more than one core, so `killpoint run
--jobs N` forks N children, each running shard i/N of the same plan in a folder of its own (its
own store and services), and merges what they found: verdict for verdict the campaign one
process would have run (`merge`). Which runs are shard i's is the plan's to say
(`plan.in_shard`: every N-th of the runs a shard may split, from i). Mutant hunts are
spread over the children as they come free. The children are forked, not spawned: they start warm,
and they inherit the scenarios and the engine under test, which a team's own code need not make
picklable.
"""

from __future__ import annotations

import multiprocessing
import queue
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from killpoint.contract.errors import KillpointError
from killpoint.harness.campaign.execute import Campaign, CampaignConfig
from killpoint.harness.campaign.merge import merge_results
from killpoint.harness.results import CampaignResult
from killpoint.harness.run.databases import pins_schema

T = TypeVar("T")
Report = Callable[[Any], None]  # what a task in a child tells this process as it goes


def run_campaign(config: CampaignConfig, jobs: int) -> CampaignResult:
    """The campaign of `config`, in `jobs` processes (in this one when `jobs` is 1); its
    progress (`on_run`, `on_plan`) told in this process, the total once every shard gave its."""
    if jobs == 1 or config.shard is not None:
        return _campaign(config)
    url = config.store_url
    if url is not None and pins_schema(url):
        raise KillpointError(
            f"--jobs {jobs}: each process needs a store of its own, and this --db pins one "
            "schema for all; leave its search_path out (each process then gets a schema of its "
            "own) or use --jobs 1"
        )
    on_run, on_plan = config.on_run, config.on_plan
    totals: dict[int, int] = {}
    # every shard makes (and counts) each recording; the merged result keeps one of each
    recordings = len(config.scenarios)

    def heard(i: int, event: tuple[str, Any]) -> None:
        kind, value = event
        if kind == "run" and on_run is not None and (i == 0 or value.kind != "clean"):
            on_run(value)
        elif kind == "plan" and on_plan is not None:
            totals[i] = value
            if len(totals) == jobs:
                on_plan(sum(totals.values()) - (jobs - 1) * recordings)

    def shard(i: int) -> Callable[[Report | None], CampaignResult]:
        def work(report: Report | None) -> CampaignResult:
            part = replace(
                config,
                workdir=config.workdir / f"shard-{i}",
                shard=(i, jobs),
                on_run=_tell(report, "run") if on_run else None,
                on_plan=_tell(report, "plan") if on_plan else None,
            )
            return _campaign(part)

        return work

    listening = on_run is not None or on_plan is not None
    parts = in_processes([shard(i) for i in range(1, jobs + 1)], heard if listening else None)
    merged = merge_results(parts)
    others = f" and {jobs - 1} more, one store per process"
    return merged.model_copy(update={"backend": parts[0].backend + others})


def _tell(report: Report | None, kind: str) -> Callable[[Any], None] | None:
    return None if report is None else (lambda value: report((kind, value)))


def _campaign(config: CampaignConfig) -> CampaignResult:
    with Campaign(config) as campaign:
        return campaign.run()


def in_processes(
    tasks: Sequence[Callable[[Report | None], T]],
    heard: Callable[[int, Any], None] | None = None,
) -> list[T]:
    """Each task in a forked child of its own, all at once; their results, in task order.

    With `heard`, a task gets a callback whose every value reaches `heard(task index, value)`
    in this process. A task that fails fails the whole call, with the child's traceback."""
    ctx = multiprocessing.get_context("fork")
    events: Any = ctx.Queue()  # ("told", i, value) | ("done", i, result) | ("failed", i, tb)
    children = [
        ctx.Process(target=_child, args=(i, task, events, heard is not None))
        for i, task in enumerate(tasks)
    ]
    try:
        for child in children:
            child.start()
        results, failures = _collect(events, children, heard)
    except BaseException:  # interrupted: take the children down too
        for child in children:
            if child.pid is not None:
                child.terminate()
        raise
    finally:
        for child in children:
            if child.pid is not None:
                child.join()
    if failures:  # a traceback's last line (the child printed it whole), or a stop's one line
        raise KillpointError(f"a campaign process failed: {failures[0].strip().splitlines()[-1]}")
    return [results[i] for i in range(len(children))]


def _collect(
    events: Any, children: Sequence[Any], heard: Callable[[int, Any], None] | None
) -> tuple[dict[int, Any], list[str]]:
    results: dict[int, Any] = {}
    failures: list[str] = []
    while len(results) + len(failures) < len(children):
        try:
            event = events.get(timeout=0.5)
        except queue.Empty:
            if all(c.exitcode is not None for c in children) and events.empty():
                silent = len(children) - len(results) - len(failures)
                failures += ["a campaign process died without a word (killed?)"] * silent
            continue
        if event[0] == "told" and heard is not None:
            heard(event[1], event[2])
        elif event[0] == "done":
            results[event[1]] = event[2]
        elif event[0] == "failed":
            failures.append(event[2])
    return results, failures


def _child(i: int, task: Callable[[Report | None], T], events: Any, report: bool) -> None:
    try:
        result = task((lambda value: events.put(("told", i, value))) if report else None)
        events.put(("done", i, result))
    except KillpointError as exc:  # a stop that says why in one line (a database gone)
        events.put(("failed", i, str(exc)))
    except BaseException:
        trace = traceback.format_exc()
        sys.stderr.write(trace)
        events.put(("failed", i, trace))


def hunts_in_processes(
    hunts: Sequence[Callable[[], T]], jobs: int, on_done: Callable[[T], None] | None = None
) -> list[T]:
    """Mutant hunts spread over `jobs` children, each taking the next hunt not yet taken when it
    is free (hunts differ a hundredfold in length: a fixed share leaves one child idle while
    the other ends a long one); their results, in order, each also told to `on_done` (in this
    process) as it ends. Each hunt has its own world, so which child makes it changes nothing."""
    if jobs == 1 or len(hunts) < 2:
        return [_told(hunt(), on_done) for hunt in hunts]
    taken = multiprocessing.get_context("fork").Value("i", 0)  # the next hunt, shared

    def take() -> int:
        with taken.get_lock():
            k, taken.value = taken.value, taken.value + 1
        return int(k)

    def worker(report: Report | None) -> list[tuple[int, T]]:
        made = []
        while (k := take()) < len(hunts):
            made.append((k, _told(hunts[k](), report)))
        return made

    heard = None if on_done is None else (lambda _i, result: on_done(result))
    done = in_processes([worker] * min(jobs, len(hunts)), heard)
    ordered = dict(pair for made in done for pair in made)
    return [ordered[k] for k in range(len(hunts))]


def _told(result: T, report: Callable[[T], None] | None) -> T:
    if report is not None:
        report(result)
    return result
