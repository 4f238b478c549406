"""Checkpoint commit cost per step and storage growth: reference engine, LangGraph, raw sqlite3.

Three runs of the same straight line of N pure steps, each on its own SQLite file in WAL mode
with `synchronous=NORMAL`, no crash:

- the reference engine (`Engine.run`): per step it builds the next checkpoint, seals it
  (canonical JSON + HMAC) and commits it with the fenced compare-and-swap of the workflow row;
- LangGraph's `SqliteSaver` on an equivalent graph of N nodes, each writing its own state key
  (what a pure step's output is to the engine);
- the floor: raw `sqlite3`, one transaction per step doing the engine's writes (the guarded
  `UPDATE` of the workflow row, the `INSERT` of a checkpoint blob of the same size and the
  `INSERT` of the step's output row).

Per-step time is the run's wall time over N, the median of several workflows.
"""

from __future__ import annotations

import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any, cast

from flow import make_input, make_pure_scenario

from killpoint.contract.artifacts import FolderArtifacts
from killpoint.contract.clock import FakeClock
from killpoint.harness.engines.reference import ensure_key
from killpoint.harness.run.world import BASE_VERSIONS
from killpoint.reference.dispatcher import Engine
from killpoint.reference.settings import Settings
from killpoint.reference.store import Store

PRAGMAS = ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL")


def _engine(store: Store, n: int, root: Path, keep: bool = True) -> tuple[Engine, Any]:
    scenario = make_pure_scenario(n, keep)
    engine = Engine(
        store,
        [scenario.workflow],
        {},
        artifacts=FolderArtifacts(root / "artifacts"),
        clock=FakeClock(),
        versions=BASE_VERSIONS.model_copy(update={"plan": scenario.workflow.plan_version}),
        settings=Settings(tenant="bench", secret=ensure_key(), owner="bench-worker"),
    )
    return engine, scenario


def engine_per_step(root: Path, n: int, runs: int, keep: bool = True) -> tuple[float, Store]:
    """Seconds per step of the reference engine running `runs` workflows of `n` pure steps."""
    store = Store(f"sqlite:///{root / 'engine.sqlite'}")
    engine, scenario = _engine(store, n, root, keep)
    name = scenario.workflow.name
    engine.run(name, f"warm-{n}", make_input("warm"), scenario.limits)
    times = []
    for k in range(runs):
        started = time.perf_counter()
        outcome = engine.run(name, f"wf-{n}-{k}", make_input(str(k)), scenario.limits)
        times.append((time.perf_counter() - started) / n)
        assert outcome.status.value == "completed", outcome
    return statistics.median(times), store


def engine_storage(root: Path, n: int, keep: bool = True) -> dict[str, float]:
    """Bytes and rows per step of one workflow of `n` steps, before and after compaction."""
    root.mkdir(parents=True, exist_ok=True)
    store = Store(f"sqlite:///{root / f'storage-{n}.sqlite'}")
    engine, scenario = _engine(store, n, root, keep)
    engine.run(scenario.workflow.name, f"st-{n}", make_input("st"), scenario.limits)
    raw = store.engine.raw_connection()
    try:
        before = _stored_bytes(raw)
        file_before = _file_bytes(raw)
        store.compact(now=FakeClock().now() + 10 * 24 * 3600, keep_window_s=0, tenant="default")
        raw.execute("VACUUM")
        after = _stored_bytes(raw)
        file_after = _file_bytes(raw)
    finally:
        raw.close()
        store.close()
    return {
        "rows_per_step": before[0] / n,
        "bytes_per_step": before[1] / n,
        "file_bytes_per_step": file_before / n,
        "compacted_rows_per_step": after[0] / n,
        "compacted_bytes_per_step": after[1] / n,
        "compacted_file_bytes_per_step": file_after / n,
        "last_checkpoint_bytes": before[2],
    }


def _stored_bytes(conn: Any) -> tuple[int, int, int]:
    """(rows, payload bytes, largest checkpoint) of the checkpoints and the output rows."""
    cps = _table_bytes(conn, "checkpoints", "body", "tag")
    outs = _table_bytes(conn, "outputs", "step", "value", "sha256")
    return cps[0] + outs[0], cps[1] + outs[1], cps[2]


def _table_bytes(conn: Any, table: str, *columns: str) -> tuple[int, int, int]:
    size = " + ".join(f"length({c})" for c in columns)
    rows, total, largest = conn.execute(
        f"SELECT count(*), coalesce(sum({size}), 0), coalesce(max({size}), 0) FROM {table}"
    ).fetchone()
    return int(rows), int(total), int(largest)


def _file_bytes(conn: Any) -> int:
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    return int((pages - free) * size)


# -- the raw floor ---------------------------------------------------------------------------

GUARDED_UPDATE = (
    "UPDATE workflows SET sequence = ?, state = ?, status = ?, status_reason = ?, "
    "attempts_left = ?, steps_left = ?, cost_left = ?, lease_expires_at = ?, updated_at = ? "
    "WHERE workflow_id = ? AND fencing_token = ? AND lease_owner = ? AND lease_expires_at > ? "
    "AND sequence = ?"
)
INSERT_CHECKPOINT = (
    "INSERT INTO checkpoints (workflow_id, sequence, run_id, state, schema_version, tenant, "
    "body, tag, fencing_token, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
INSERT_OUTPUT = (
    "INSERT INTO outputs (workflow_id, sequence, step, value, sha256) VALUES (?, ?, ?, ?, ?)"
)


def raw_per_step(root: Path, n: int, runs: int, body_bytes: int) -> float:
    """Seconds per step of plain sqlite3 doing the engine's writes per step."""
    path = root / "raw.sqlite"
    Store(f"sqlite:///{path}").close()  # the engine's own tables, indexes and all
    conn = sqlite3.connect(path, isolation_level=None)
    for pragma in PRAGMAS:
        conn.execute(pragma)
    body, tag = b"x" * body_bytes, "hmac-sha256:" + "0" * 64
    value, sha = '"0123456789abcdef"', "0" * 64
    times = []
    for k in range(runs + 1):
        wf = f"raw-{n}-{k}"
        conn.execute(
            "INSERT INTO workflows (workflow_id, workflow_name, tenant, status, status_reason, "
            "state, sequence, fencing_token, lease_owner, lease_expires_at, attempts_left, "
            "steps_left, cost_left, deadline, compacted_below, created_at, updated_at) "
            "VALUES (?, 'raw', 't', 'running', '', 's0', 1, 1, 'me', 1e12, 20, 100, 100, 1e12,"
            " 0, 0, 0)",
            (wf,),
        )
        started = time.perf_counter()
        for seq in range(2, n + 2):
            conn.execute("BEGIN IMMEDIATE")
            moved = conn.execute(
                GUARDED_UPDATE,
                (seq, f"s{seq}", "running", "", 20, 100, 100, 1e12, 1.0, wf, 1, "me", 1.0, seq - 1),
            ).rowcount
            assert moved == 1
            conn.execute(INSERT_CHECKPOINT, (wf, seq, "r1", f"s{seq}", 4, "t", body, tag, 1, 1.0))
            conn.execute(INSERT_OUTPUT, (wf, seq, f"pure_{seq}", value, sha))
            conn.execute("COMMIT")
        if k:  # the first is a warm-up
            times.append((time.perf_counter() - started) / n)
    conn.close()
    return statistics.median(times)


# -- LangGraph ---------------------------------------------------------------------------------


def _langgraph_app(n: int, saver: Any) -> Any:
    import hashlib
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    fields: dict[str, Any] = {"seed": str, **{f"pure_{i}": str for i in range(n)}}
    state = TypedDict("BenchState", fields, total=False)  # type: ignore[misc]
    graph = StateGraph(state)
    previous = START
    for i in range(n):
        name = f"pure_{i}"
        before = f"pure_{i - 1}" if i else "seed"

        def node(s: dict[str, Any], name: str = name, before: str = before) -> dict[str, Any]:
            digest = hashlib.sha256(f"{name}:{s.get(before, '')}".encode()).hexdigest()
            return {name: digest[:16]}

        graph.add_node(name, cast(Any, node))  # LangGraph types nodes by its state schema
        graph.add_edge(previous, name)
        previous = name
    graph.add_edge(previous, END)
    return graph.compile(checkpointer=saver)


def _saver(path: Path) -> tuple[Any, sqlite3.Connection]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(path, check_same_thread=False)
    for pragma in PRAGMAS:
        conn.execute(pragma)
    saver = SqliteSaver(conn)
    saver.setup()
    return saver, conn


def langgraph_per_step(root: Path, n: int, runs: int) -> dict[str, float]:
    """Seconds per step of a LangGraph graph of `n` nodes, with SqliteSaver and without one."""
    saver, conn = _saver(root / "langgraph.sqlite")
    result = {}
    for label, checkpointer in (("saver", saver), ("none", None)):
        app = _langgraph_app(n, checkpointer)
        app.invoke({"seed": "warm"}, {"configurable": {"thread_id": f"warm-{label}"}})
        times = []
        for k in range(runs):
            started = time.perf_counter()
            app.invoke({"seed": str(k)}, {"configurable": {"thread_id": f"{label}-{n}-{k}"}})
            times.append((time.perf_counter() - started) / n)
        result[label] = statistics.median(times)
    conn.close()
    return result


def langgraph_storage(root: Path, n: int) -> dict[str, float]:
    root.mkdir(parents=True, exist_ok=True)
    saver, conn = _saver(root / f"lg-storage-{n}.sqlite")
    app = _langgraph_app(n, saver)
    app.invoke({"seed": "st"}, {"configurable": {"thread_id": "st"}})
    cps = _table_bytes(conn, "checkpoints", "checkpoint", "metadata")
    writes = _table_bytes(conn, "writes", "value")
    file_bytes = _file_bytes(conn)
    conn.close()
    return {
        "rows_per_step": (cps[0] + writes[0]) / n,
        "bytes_per_step": (cps[1] + writes[1]) / n,
        "file_bytes_per_step": file_bytes / n,
        "last_checkpoint_bytes": cps[2],
    }
