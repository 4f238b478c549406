"""Hostile checkpoint rows: a body stored as text, a sealed legacy body missing a field.

Each is an integrity failure (typed, quarantined on resume, rejected in the operator view),
never a bare TypeError or KeyError from the row reader or the migrations.
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from killpoint.contract.clock import FakeClock
from killpoint.contract.records import RunStatus
from killpoint.reference._schema import checkpoints
from killpoint.reference.checkpoint import open_checkpoint
from killpoint.reference.dispatcher import Engine
from killpoint.reference.errors import IntegrityError
from killpoint.reference.operator_view import build_view
from killpoint.reference.store import Store
from tests.support.fixtures import TEST_KEY
from tests.support.migrations import insert_old, v1_doc, v2_doc

KEY = TEST_KEY.encode()


def _body_as_text(store: Store) -> None:
    with store.engine.begin() as conn:
        conn.execute(sa.update(checkpoints).values(body=sa.literal_column("'not bytes'")))


def test_a_text_body_quarantines_the_resume_and_is_rejected_in_the_view(
    engine: Engine, store: Store, clock: FakeClock
) -> None:
    insert_old(store, clock, v2_doc(clock))
    _body_as_text(store)

    outcome = engine.resume("wf-old")

    # SQLite keeps the text as text; PostgreSQL coerces it into bytea, which then fails the seal.
    why = "not bytes" if store.engine.dialect.name == "sqlite" else "integrity tag"
    assert outcome.status is RunStatus.QUARANTINED
    assert why in outcome.reason
    view = build_view(store, "wf-old", key=KEY, now=clock.now(), tenant="default")
    assert view.checkpoint is not None and not view.checkpoint.trusted
    assert why in (view.checkpoint.rejected_reason or "")


@pytest.mark.parametrize(
    "doc",
    [
        lambda c: {k: v for k, v in v1_doc(c).items() if k != "input"},
        lambda c: {**v1_doc(c), "limits": {"attempts": 1}},
        lambda c: {**v1_doc(c), "effects": [{"operation_id": "x"}]},
        lambda c: {**v1_doc(c), "limits": "ten"},
        lambda c: {k: v for k, v in v2_doc(c).items() if k != "plan_version"},
        lambda c: {**v2_doc(c), "created_at": "yesterday"},
    ],
)
def test_a_sealed_legacy_body_with_a_bad_field_is_an_integrity_error(
    doc: Any, store: Store, clock: FakeClock
) -> None:
    insert_old(store, clock, doc(clock))
    with pytest.raises(IntegrityError):
        open_checkpoint(store.checkpoints("wf-old")[0], KEY, "default")
