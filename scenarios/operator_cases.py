"""Named cases with an operator: a person's controls applied once a run stops for them.

Seed 000 asks for narrow manual controls and warns that "force complete" is too dangerous. A
case here names the controls the harness applies as that person (`FaultSchedule.controls`,
`killpoint.harness.operator`), so the oracle judges what an engine's operator tools leave.
"""

from __future__ import annotations

from killpoint.harness.history import History
from killpoint.harness.scenario import NamedCase
from killpoint.harness.schedule import FaultSchedule, HitPoint


def _review_and_sent_once(h: History) -> str | None:
    if h.final_status != "needs_review":
        return f"ended {h.final_status} ({h.final_reason}): an unprovable mail is not done"
    sent = sum(1 for a in h.applied if a.service == "mailer")
    return None if sent == 1 else f"the mailer took the message {sent} times, expected once"


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
)
