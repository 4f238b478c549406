"""The store's own record of a soak's writes, and the judge of superseded holders.

The rows a soak ends with cannot show every stale write: a checkpoint written over keeps only
its last writer, a takeover leaves only the latest fencing token on the workflow row, and a
service that deduplicates by key hides a second send. So before the race the soak has the
database record, in the writing transaction itself (a trigger), each checkpoint and effect-log
row inserted and each fencing token taken, in order. Every write of the reference engine moves
its workflow row first, which serializes one workflow's writes, so the record's order is the
order they happened. Then a write under a token smaller than one already taken is a holder
writing after it was superseded, and a checkpoint sequence inserted twice is a write erased by
a later one: neither can happen under a fenced compare-and-swap.
"""

from __future__ import annotations

from typing import NamedTuple

from sqlalchemy import create_engine, make_url, text

TABLE = "soak_writes"
_POSTGRES = (
    f"CREATE TABLE {TABLE} (id BIGSERIAL PRIMARY KEY, workflow_id TEXT NOT NULL, "
    "what TEXT NOT NULL, sequence INTEGER, token BIGINT NOT NULL)",
    f"""CREATE FUNCTION {TABLE}_record() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        INSERT INTO {TABLE} (workflow_id, what, sequence, token)
        VALUES (NEW.workflow_id, TG_TABLE_NAME, (to_jsonb(NEW) ->> 'sequence')::int,
                NEW.fencing_token);
        RETURN NULL;
    END $$""",
    f"CREATE TRIGGER {TABLE}_checkpoints AFTER INSERT ON checkpoints "
    f"FOR EACH ROW EXECUTE FUNCTION {TABLE}_record()",
    f"CREATE TRIGGER {TABLE}_effect_log AFTER INSERT ON effect_log "
    f"FOR EACH ROW EXECUTE FUNCTION {TABLE}_record()",
    f"CREATE TRIGGER {TABLE}_leases AFTER UPDATE OF fencing_token ON workflows FOR EACH ROW "
    f"WHEN (NEW.fencing_token <> OLD.fencing_token) EXECUTE FUNCTION {TABLE}_record()",
)
_SQLITE = (
    f"CREATE TABLE {TABLE} (id INTEGER PRIMARY KEY AUTOINCREMENT, workflow_id TEXT NOT NULL, "
    "what TEXT NOT NULL, sequence INTEGER, token INTEGER NOT NULL)",
    *(
        f"CREATE TRIGGER {TABLE}_{table} AFTER {event} ON {table} {when}BEGIN "
        f"INSERT INTO {TABLE} (workflow_id, what, sequence, token) "
        f"VALUES (NEW.workflow_id, '{table}', {sequence}, NEW.fencing_token); END"
        for table, event, when, sequence in (
            ("checkpoints", "INSERT", "", "NEW.sequence"),
            ("effect_log", "INSERT", "", "NULL"),
            (
                "workflows",
                "UPDATE OF fencing_token",
                "WHEN NEW.fencing_token <> OLD.fencing_token ",
                "NULL",
            ),
        )
    ),
)


class Write(NamedTuple):
    what: str  # the table written: checkpoints, effect_log, or workflows (a token taken)
    sequence: int | None  # a checkpoint's
    token: int


def record_writes(url: str) -> None:
    """Have the store at `url` record its writes from now on."""
    statements = _SQLITE if make_url(url).get_backend_name() == "sqlite" else _POSTGRES
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            for statement in statements:
                conn.exec_driver_sql(statement)
    finally:
        engine.dispose()


def recorded_writes(url: str) -> dict[str, list[Write]]:
    """Each workflow's recorded writes, in the order they were made."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(f"SELECT workflow_id, what, sequence, token FROM {TABLE} ORDER BY id")
            ).all()
    finally:
        engine.dispose()
    out: dict[str, list[Write]] = {}
    for wid, what, sequence, token in rows:
        out.setdefault(str(wid), []).append(Write(str(what), sequence, int(token)))
    return out


def judge_writes(writes: dict[str, list[Write]]) -> list[str]:
    """The first stale write of each workflow: one under a token smaller than the largest
    taken before it, or a checkpoint at a sequence already written."""
    stale = []
    for wid, log in writes.items():
        taken, written = 0, set()
        for what, sequence, token in log:
            if what == "workflows":
                taken = max(taken, token)
                continue
            label = "an effect-log row" if sequence is None else f"checkpoint {sequence}"
            if token < taken:
                stale.append(
                    f"{wid}: {label} written under token {token} after token {taken} was taken"
                )
                break
            if sequence is not None and sequence in written:
                stale.append(f"{wid}: {label} written twice: the second write erased the first")
                break
            written.add(sequence)
    return stale
