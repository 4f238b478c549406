"""SQLAlchemy Core tables of the store: plain nouns, one row per fact.

`workflows` holds the current position, the lease and the durable budget; `checkpoints` is the
append-only history of sealed envelopes; `outputs` the steps' small results, written with the
checkpoint that made them and pinned by its hash chain; `effects` is the ledger (one row per
logical operation) and `effect_log` its append-only transitions; `artifacts` and `approvals`
are what they say. `deliveries` counts how often a run was handed to a worker without ending
(the dead-letter rule), and `controls` is the audit of every operator control that acted.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)

# Bounds of what the store can hold: sequences and budgets are INTEGER columns (32 bits on
# PostgreSQL), a time in milliseconds a 64-bit integer; a sealed body beyond them is refused
# when read, not on the next write.
INT32 = 2**31 - 1
INT64 = 2**63 - 1

metadata = MetaData()

workflows = Table(
    "workflows",
    metadata,
    Column("workflow_id", String(200), primary_key=True),
    Column("workflow_name", String(200), nullable=False),
    Column("tenant", String(200), nullable=False),
    Column("status", String(40), nullable=False),
    Column("status_reason", Text, nullable=False, default=""),
    Column("state", String(200), nullable=False),
    Column("sequence", Integer, nullable=False),
    Column("fencing_token", BigInteger, nullable=False, default=0),
    Column("lease_owner", String(200)),
    Column("lease_expires_at", Float),
    Column("attempts_left", Integer, nullable=False),
    Column("steps_left", Integer, nullable=False),
    Column("cost_left", Integer, nullable=False),
    Column("deadline", Float, nullable=False),
    Column("compacted_below", Integer, nullable=False, default=0),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)

checkpoints = Table(
    "checkpoints",
    metadata,
    Column(
        "workflow_id",
        String(200),
        ForeignKey("workflows.workflow_id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("sequence", Integer, primary_key=True),
    Column("run_id", String(200), nullable=False),
    Column("state", String(200), nullable=False),
    Column("schema_version", Integer, nullable=False),
    Column("tenant", String(200), nullable=False),
    Column("body", LargeBinary, nullable=False),
    Column("tag", String(200), nullable=False),
    Column("fencing_token", BigInteger, nullable=False),
    Column("created_at", Float, nullable=False),
)

outputs = Table(
    "outputs",
    metadata,
    Column("workflow_id", String(200), primary_key=True),
    Column("sequence", Integer, primary_key=True),  # the checkpoint that committed it
    Column("step", String(200), primary_key=True),
    Column("value", Text, nullable=False),  # canonical JSON
    Column("sha256", String(64), nullable=False),
)

effects = Table(
    "effects",
    metadata,
    Column("workflow_id", String(200), primary_key=True),
    Column("operation_id", String(300), primary_key=True),
    Column("step", String(200), nullable=False),
    Column("service", String(200), nullable=False),
    Column("intent", String(300), nullable=False),
    Column("args", Text, nullable=False),
    Column("idempotency_key", String(200), nullable=False, unique=True),
    Column("fingerprint", String(100), nullable=False),
    Column("status", String(40), nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("receipt", Text),
    Column("reason", Text, nullable=False, default=""),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)

effect_log = Table(
    "effect_log",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("workflow_id", String(200), nullable=False),
    Column("operation_id", String(300), nullable=False),
    Column("status", String(40), nullable=False),
    Column("fencing_token", BigInteger, nullable=False),
    Column("attempt", Boolean, nullable=False, default=False),
    Column("at", Float, nullable=False),
    Column("detail", Text, nullable=False, default=""),
    Index("ix_effect_log_workflow", "workflow_id", "id"),
)

artifacts = Table(
    "artifacts",
    metadata,
    Column("workflow_id", String(200), primary_key=True),
    Column("step", String(200), primary_key=True),
    Column("sha256", String(64), nullable=False),
    Column("uri", Text, nullable=False),
    Column("media_type", String(200), nullable=False),
    Column("size", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
)

approvals = Table(
    "approvals",
    metadata,
    Column("workflow_id", String(200), primary_key=True),
    Column("gate", String(200), primary_key=True),
    Column("status", String(20), nullable=False),
    Column("scope", Text, nullable=False),
    Column("policy_version", String(100), nullable=False),
    Column("payload", Text, nullable=False),
    Column("requested_at", Float, nullable=False),
    Column("actor", String(200)),
    Column("expires_at", Float),
)

deliveries = Table(
    "deliveries",
    metadata,
    Column("workflow_id", String(200), primary_key=True),
    Column("count", Integer, nullable=False),
    Column("at", Float, nullable=False),
)

controls = Table(
    "controls",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("workflow_id", String(200), nullable=False),
    Column("tenant", String(200), nullable=False),
    Column("control", String(40), nullable=False),
    Column("actor", String(200), nullable=False),
    Column("reason", Text, nullable=False),
    Column("at", Float, nullable=False),
    Column("from_status", String(40), nullable=False),
    Column("from_state", String(200), nullable=False),
    Column("from_sequence", Integer, nullable=False),
    Column("to_status", String(40), nullable=False),
    Column("to_sequence", Integer, nullable=False),
    Column("fencing_token", BigInteger, nullable=False),
    Column("detail", Text, nullable=False, default=""),
    Index("ix_controls_workflow", "workflow_id", "id"),
)
