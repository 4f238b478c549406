"""Named cases with an operator, and the dead-letter path a person is called to.

Seed 000 asks for narrow manual controls and warns that "force complete" is too dangerous. A
case here names the controls the harness applies as that person (`FaultSchedule.controls`,
`killpoint.harness.operator`), so the oracle judges what an engine's operator tools leave.
Seed 000 also names the "dead-letter path" among what production needs, and seed 001 says
"redelivery is normal": the dead-letter cases deliver a run to more workers than the reference
engine's delivery limit (20), each killed in its turn, then once more after it ended, so the
limit, the durable stop, the queue and the stop's refusal to act again are all exercised.
"""

from __future__ import annotations

from killpoint.harness.checkers.ground_truth import is_mutation
from killpoint.harness.history import History
from killpoint.harness.scenario import NamedCase, NotApplicable
from killpoint.harness.schedule import FaultSchedule, HitPoint

DELIVERIES = 21  # one more than the reference engine's limit (`Settings.max_deliveries`)
# the first delivery dies as the charge's response comes back, each later one as it has asked
# the payments service about it: the charge is applied and its outcome stays in doubt
DYING = (
    HitPoint(worker=0, step="charge", boundary="transport.response_received"),
    *(HitPoint(worker=w, step="charge", boundary="reconcile.looked_up") for w in range(1, 20)),
)


def _review_and_sent_once(h: History) -> str | None:
    if h.final_status != "needs_review":
        return f"ended {h.final_status} ({h.final_reason}): an unprovable mail is not done"
    sent = sum(1 for a in h.applied if a.service == "mailer")
    return None if sent == 1 else f"the mailer took the message {sent} times, expected once"


def _dead_lettered_and_left(h: History) -> str | None:
    """Stopped for a person by its durable records, and nothing written after the stop."""
    if h.final_status == "completed":
        return NotApplicable(f"{DELIVERIES} deliveries reached no delivery limit of the engine")
    if h.final_status != "dead_lettered":
        return f"ended {h.final_status} ({h.final_reason}), expected dead_lettered"
    stops = [c for c in h.checkpoints if c.status == "dead_lettered"]
    if not stops:
        return NotApplicable("no checkpoint of the engine records the dead letter")
    dead = stops[0]
    later = [c.sequence for c in h.checkpoints if c.sequence > dead.sequence]
    if later:
        return f"a delivery after the dead letter wrote checkpoint #{later[0]}"
    acted = [r for r in h.requests if r.time > dead.created_at and is_mutation(r)]
    return f"{len(acted)} write(s) to a service after the dead letter" if acted else None


OPERATOR_CASES: tuple[NamedCase, ...] = (
    NamedCase(
        "operator_reconcile_after_lost_mail",
        "000: Manual controls should be narrow; 'force complete' is usually too dangerous",
        FaultSchedule(
            scenario="email",
            run_id="case-operator-reconcile-after-lost-mail",
            crashes=(HitPoint(worker=0, step="notify", boundary="effect.response_read"),),
            controls=("reconcile",),
        ),
        "The mail went out and its receipt was lost; the run stops for review, and an operator's "
        "reconcile cannot prove it (the mailer cannot be asked): refused, the run stays in review.",
        _review_and_sent_once,
    ),
    NamedCase(
        "dead_letter_after_max_deliveries",
        "000: Recovery metrics, operator queue, dead-letter path; 001: redelivery is normal",
        FaultSchedule(
            scenario="order_saga",
            run_id="case-dead-letter-after-max-deliveries",
            crashes=DYING,
            redeliver_after_end=True,
            max_workers=DELIVERIES + 3,
        ),
        f"Delivered {DELIVERIES} times, each worker dying with the charge in doubt: the run is "
        "dead-lettered in its store and queued for a person with its reason and the charge in "
        "doubt; the delivery after that writes and sends nothing.",
        _dead_lettered_and_left,
    ),
)
