"""killpoint benchmarks: one run, every comparison, reported as ratios.

    .venv/bin/python benchmarks/bench.py [--quick] [--json PATH] [--pg URL | --no-pg]

Prints a table of figures against the targets of issue 7 and, with --json, writes them for
tools that track them over time. --quick runs a reduced version in under a minute. The machine
is noisy, so comparisons are made in the same run; cycles per CPU-second are reported next to
cycles per wall-second for the same reason.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))

import commit_cost  # noqa: E402
import cycles  # noqa: E402
import detection  # noqa: E402
from flow import make_scenario  # noqa: E402

DEFAULT_PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def _log(message: str) -> None:
    print(f"  … {message}", file=sys.stderr, flush=True)


def measure(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    quick = args.quick
    fig: dict[str, Any] = {"quick": quick}
    pg = None if args.no_pg else args.pg
    fig.update(cycle_figures(root, quick, pg))
    fig.update(commit_cost_figures(root, quick))
    fig.update(storage_figures(root))
    fig["scaling"] = scaling_figures(root, quick)
    _log("runs to detection: exhaustive against random kill timing")
    fig.update(systematic_vs_random(root / "detect", quick))
    return fig


def cycle_figures(root: Path, quick: bool, pg: str | None) -> dict[str, Any]:
    """Crash-recover cycles per second in each tier and on each store, and the enumerations."""
    fig: dict[str, Any] = {}
    scenario = make_scenario(10)
    _log("in-process cycles on SQLite")
    with cycles.sqlite_world(root / "sqlite") as world:
        t = cycles.crash_cycles(world, scenario, 30 if quick else 180)
        fig["inprocess_cycles_per_s"] = t.per_s
        fig["inprocess_cycles_per_cpu_s"] = t.per_cpu_s
        _log("the canary scan's share of a cycle")
        scan_ms, share = cycles.canary_scan_cost(world, scenario, 30 if quick else 120)
        fig["canary_scan_ms_per_run"], fig["canary_scan_share_of_a_run"] = scan_ms, share
        _log("single- and double-crash enumerations")
        single = cycles.single_enumeration(world, scenario)
        fig["single_crash_enumeration_s"] = single.wall_s
        fig["single_crash_enumeration_runs"] = single.runs
        double = cycles.double_enumeration(world, scenario, limit=30 if quick else None)
        fig["double_crash_enumeration_s"] = double.wall_s
        fig["double_crash_enumeration_runs"] = double.runs
        fig["double_crash_enumeration_complete"] = not quick
        fig["enumeration_violations"] = single.violations + double.violations
    if pg and cycles.postgres_available(pg):
        _log("in-process cycles on PostgreSQL")
        with cycles.postgres_world(root / "pg", pg) as world:
            t = cycles.crash_cycles(world, scenario, 10 if quick else 90)
            fig["inprocess_cycles_per_s_postgres"] = t.per_s
            fig["inprocess_cycles_per_cpu_s_postgres"] = t.per_cpu_s
    _log("SIGKILL cycles (forked workers, loopback HTTP)")
    with cycles.real_world(root / "real") as world:
        t = cycles.crash_cycles(world, scenario, 6 if quick else 45, cycles.real_runner())
        fig["sigkill_cycles_per_s"] = t.per_s
    jobs = len(os.sched_getaffinity(0))
    fig["processes"] = jobs
    if jobs > 1:
        _log(f"the same cycles in {jobs} processes at once (killpoint run --jobs {jobs})")
        t = cycles.parallel_cycles(root / "par", scenario, 30 if quick else 180, jobs)
        fig["inprocess_cycles_per_s_all_cores"] = t.per_s
        t = cycles.parallel_cycles(root / "par-real", scenario, 6 if quick else 45, jobs, True)
        fig["sigkill_cycles_per_s_all_cores"] = t.per_s
    return fig


def commit_cost_figures(root: Path, quick: bool) -> dict[str, Any]:
    """Checkpoint commit cost per step against LangGraph's SqliteSaver and raw sqlite3."""
    fig: dict[str, Any] = {}
    _log("checkpoint commit cost: engine, LangGraph SqliteSaver, raw sqlite3")
    n, runs = 10, 15 if quick else 60
    engine_s, store = commit_cost.engine_per_step(root / "cost", n, runs)
    body = len(store.checkpoints(f"wf-{n}-0")[-1].body)
    store.close()
    raw_s = commit_cost.raw_per_step(root / "cost", n, runs, body)
    lg = commit_cost.langgraph_per_step(root / "cost", n, runs)
    fig["engine_step_us"] = engine_s * 1e6
    fig["raw_sqlite_step_us"] = raw_s * 1e6
    fig["langgraph_step_us"] = lg["saver"] * 1e6
    fig["langgraph_step_no_saver_us"] = lg["none"] * 1e6
    fig["checkpoint_cost_ratio_vs_langgraph"] = engine_s / lg["saver"]
    fig["checkpoint_cost_ratio_vs_raw_sqlite"] = engine_s / raw_s
    fig["checkpoint_body_bytes"] = body
    # the cost of one more step: runs of 60 against runs of 10 (a run's own start, lease and
    # release are paid once per run, not per step)
    long = 60
    engine_long, store = commit_cost.engine_per_step(root / "cost", long, runs)
    store.close()
    lg_long = commit_cost.langgraph_per_step(root / "cost", long, runs)
    marginal = (engine_long * long - engine_s * n) / (long - n)
    lg_marginal = (lg_long["saver"] * long - lg["saver"] * n) / (long - n)
    fig["engine_step_marginal_us"] = marginal * 1e6
    fig["langgraph_step_marginal_us"] = lg_marginal * 1e6
    fig["checkpoint_cost_ratio_vs_raw_sqlite_marginal"] = marginal / raw_s
    fig["checkpoint_cost_ratio_vs_langgraph_marginal"] = marginal / lg_marginal
    return fig


def storage_figures(root: Path) -> dict[str, Any]:
    """Bytes and rows per step at 10, 100 and 1000 steps, against LangGraph's."""
    fig: dict[str, Any] = {}
    _log("storage growth at 10, 100, 1000 steps")
    steps = (10, 100, 1000)
    eng = {s: commit_cost.engine_storage(root / "storage", s) for s in steps}
    flat = {s: commit_cost.engine_storage(root / "storage-nokeep", s, keep=False) for s in steps}
    lgs = {s: commit_cost.langgraph_storage(root / "storage-lg", s) for s in steps}
    fig["storage_bytes_per_step"] = {str(s): eng[s]["bytes_per_step"] for s in steps}
    fig["storage_rows_per_step"] = {str(s): eng[s]["rows_per_step"] for s in steps}
    fig["storage_bytes_per_step_compacted"] = {
        str(s): eng[s]["compacted_bytes_per_step"] for s in steps
    }
    fig["storage_bytes_per_step_no_outputs"] = {str(s): flat[s]["bytes_per_step"] for s in steps}
    fig["storage_bytes_per_step_langgraph"] = {str(s): lgs[s]["bytes_per_step"] for s in steps}
    fig["storage_rows_per_step_langgraph"] = {str(s): lgs[s]["rows_per_step"] for s in steps}
    fig["storage_file_bytes_per_step"] = {str(s): eng[s]["file_bytes_per_step"] for s in steps}
    fig["storage_file_bytes_per_step_langgraph"] = {
        str(s): lgs[s]["file_bytes_per_step"] for s in steps
    }
    return fig


def scaling_figures(root: Path, quick: bool) -> dict[str, Any]:
    """The single-crash campaign's cost as the workflow grows."""
    _log("scaling of the single-crash campaign with workflow length")
    # whole campaigns up to 50 steps; at 200 steps (about 800 runs of 200 steps) a sample of
    # evenly spaced singles, projected to the whole (quick: samples everywhere)
    samples = {10: 8, 50: 8, 200: 4} if quick else {10: None, 50: None, 200: 40}
    figures: dict[str, Any] = {}
    for length, sample in samples.items():
        s = cycles.scaling(root / "scaling", length, sample)
        figures[str(length)] = {
            "runs": s.runs,
            "planned_runs": s.planned,
            "wall_s": s.wall_s,
            "projected_campaign_s": s.projected_s,
            "s_per_run": s.wall_s / s.runs,
            "peak_traced_mb": s.peak_traced_mb,
            "max_rss_mb": s.max_rss_mb,
        }
    return figures


def systematic_vs_random(root: Path, quick: bool) -> dict[str, Any]:
    """Runs to detection over bench10, order_saga and email (the headline), and over the whole
    catalogue (full run only): the scenarios' verdict tables are made once per mutant."""
    from killpoint.scenarios import CATALOGUE
    from killpoint.scenarios.mutants import MUTANTS

    quick_set = ("only_conversation_saved", "fresh_idempotency_key_on_resume")
    chosen = {k: v for k, v in MUTANTS.items() if not quick or k in quick_set}
    scenarios = [make_scenario(10), CATALOGUE["order_saga"], CATALOGUE["email"]]
    if quick:
        scenarios = scenarios[:1]
    every = scenarios if quick else [scenarios[0], *CATALOGUE.values()]
    seeds = 200
    rows, catalogue_rows = [], []
    for name, spec in chosen.items():
        tables = detection.tabulate_all(name, spec, every, root)
        rows.append(detection.detect(name, [tables[s.name] for s in scenarios], seeds))
        if not quick:
            catalogue_rows.append(detection.detect(name, [tables[s] for s in CATALOGUE], seeds))
    out: dict[str, Any] = {
        "detection": [r.__dict__ for r in rows],
        "detection_scenarios": [s.name for s in scenarios],
        "detection_seeds": seeds,
    }
    out.update(detection.ratios(rows))
    if catalogue_rows:
        out["detection_catalogue"] = [r.__dict__ for r in catalogue_rows]
        out.update({f"{k}_catalogue": v for k, v in detection.ratios(catalogue_rows).items()})
    full, random_cover = detection.reference_coverage(scenarios[0], root, 10)
    out["coverage_runs_exhaustive"] = full
    out["coverage_runs_random"] = random_cover
    out["coverage_ratio_random_vs_exhaustive"] = random_cover / full
    return out


# -- the table ---------------------------------------------------------------------------------

TARGETS: list[tuple[str, str, str, Any]] = [
    ("checkpoint_cost_ratio_vs_langgraph", "engine step / LangGraph SqliteSaver step", "<=", 0.5),
    ("checkpoint_cost_ratio_vs_raw_sqlite", "engine step / raw sqlite3 floor", "<=", 2.0),
    (
        "checkpoint_cost_ratio_vs_langgraph_marginal",
        "  … one more step, engine / LangGraph",
        "<=",
        0.5,
    ),
    ("checkpoint_cost_ratio_vs_raw_sqlite_marginal", "  … one more step, engine / raw", "<=", 2.0),
    ("inprocess_cycles_per_s", "in-process crash-recover cycles/s (SQLite)", ">=", 300),
    ("inprocess_cycles_per_cpu_s", "  … per CPU-second", ">=", 300),
    ("canary_scan_share_of_a_run", "  … share of a cycle the canary scan takes", "", None),
    ("inprocess_cycles_per_s_postgres", "in-process cycles/s (PostgreSQL)", "", None),
    ("sigkill_cycles_per_s", "SIGKILL cycles/s (SQLite)", ">=", 50),
    ("inprocess_cycles_per_s_all_cores", "in-process cycles/s, one process per core", ">=", 300),
    ("sigkill_cycles_per_s_all_cores", "SIGKILL cycles/s, one process per core", ">=", 50),
    ("single_crash_enumeration_s", "single-crash enumeration, 10 steps (s)", "<", 1.0),
    ("double_crash_enumeration_s", "double-crash enumeration, 10 steps (s)", "", None),
    ("runs_to_detection_ratio_random_vs_exhaustive", "random / exhaustive runs", ">=", 10),
    ("runs_to_detection_ratio_random_hooks_vs_exhaustive", "  … random, hook times only", "", None),
    ("runs_to_detection_ratio_random_warm_vs_exhaustive", "  … random, warm worker", "", None),
    ("runs_to_detection_ratio_random_hits_vs_exhaustive", "  … random by hit count", "", None),
    (
        "runs_to_detection_ratio_random_vs_exhaustive_workflow_order",
        "  … exhaustive in workflow order (before)",
        "",
        None,
    ),
    (
        "runs_to_detection_ratio_random_vs_exhaustive_hunt_catalogue",
        "  … whole catalogue, hunt order",
        "",
        None,
    ),
    (
        "coverage_ratio_random_vs_exhaustive",
        "random / exhaustive runs to crash every boundary",
        "",
        None,
    ),
]


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def _met(value: Any, op: str, target: Any) -> str:
    if target is None or value is None:
        return ""
    ok = {"<=": value <= target, ">=": value >= target, "<": value < target}[op]
    return "met" if ok else "MISSED"


def table(fig: dict[str, Any]) -> str:
    lines = [f"{'figure':<48} {'value':>10}  {'target':>8}  ", "-" * 78]
    for key, label, op, target in TARGETS:
        value = fig.get(key)
        goal = f"{op} {target}" if target is not None else ""
        lines.append(f"{label:<48} {_fmt(value):>10}  {goal:>8}  {_met(value, op, target)}")
    lines.append("")
    lines.append(
        f"per step: engine {fig['engine_step_us']:.0f} µs, LangGraph+SqliteSaver "
        f"{fig['langgraph_step_us']:.0f} µs (no saver {fig['langgraph_step_no_saver_us']:.0f} µs), "
        f"raw sqlite3 {fig['raw_sqlite_step_us']:.0f} µs; one more step: engine "
        f"{fig['engine_step_marginal_us']:.0f} µs, "
        f"LangGraph {fig['langgraph_step_marginal_us']:.0f} µs; "
        f"checkpoint body {fig['checkpoint_body_bytes']} B"
    )
    lines.append(f"{'storage, bytes per step':<40} {'10':>9} {'100':>9} {'1000':>9}")
    for key, label in (
        ("storage_bytes_per_step", "engine (outputs kept)"),
        ("storage_bytes_per_step_no_outputs", "engine (no outputs kept)"),
        ("storage_bytes_per_step_compacted", "engine after compaction"),
        ("storage_bytes_per_step_langgraph", "LangGraph SqliteSaver"),
        ("storage_rows_per_step", "engine rows per step"),
        ("storage_rows_per_step_langgraph", "LangGraph rows per step"),
    ):
        row = fig[key]
        lines.append(f"  {label:<38} " + " ".join(f"{row[k]:>9.4g}" for k in ("10", "100", "1000")))
    lines.append(
        "scaling (single-crash campaign): steps, runs made/planned, wall s, projected s, s/run,"
        " peak traced MB"
    )
    for steps, s in fig["scaling"].items():
        lines.append(
            f"  {steps:>5} {s['runs']:>5}/{s['planned_runs']:<5} {s['wall_s']:>8.2f}"
            f" {s['projected_campaign_s']:>9.2f} {s['s_per_run']:>8.4f} {s['peak_traced_mb']:>8.1f}"
        )
    lines.append(
        "runs to detection: exhaustive (campaign order / hunt order / workflow order),"
        " random (by time / hook times only / warm worker / by hits)"
    )
    for key, title in (
        ("detection", "bench10, order_saga, email"),
        ("detection_catalogue", "whole catalogue"),
    ):
        if key not in fig:
            continue
        lines.append(f"  {title}:")
        for row in fig[key]:
            exhaustive = "/".join(
                _fmt(row[k])
                for k in ("exhaustive_runs", "exhaustive_hunt_runs", "exhaustive_workflow_runs")
            )
            randoms = "/".join(
                _fmt(row["random_runs"].get(k)) for k in ("time", "hooks", "warm", "hits")
            )
            lines.append(f"    {row['mutant']:<34} {exhaustive:>12} {randoms:>24}  {row['note']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a reduced run, under a minute")
    parser.add_argument("--json", metavar="PATH", help="write the figures as JSON")
    parser.add_argument("--pg", default=os.environ.get("KILLPOINT_BENCH_PG_URL", DEFAULT_PG))
    parser.add_argument("--no-pg", action="store_true", help="skip PostgreSQL")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="kp-bench-") as tmp:
        fig = measure(args, Path(tmp))
    fig["bench_wall_s"] = time.perf_counter() - started
    print(table(fig))
    print(f"\n(benchmark wall time {fig['bench_wall_s']:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(fig, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
