"""Single effect: each logical operation happened at most once in the world, and exactly once
when the workflow claims completion (or, for a saga, compensation); an irreversible action of
a service that cannot be asked what it did is never attempted twice (where the service can be
asked, a second attempt after one proved absent is how the action gets done once).

Its evidence is the services' journals and the status the run ended with: the durable one,
or a worker's word that it completed (held against it). Without a history reader, a run its
workers did not say completed may still have: an expected effect missing is then unknown.
"""

from __future__ import annotations

from collections import defaultdict

from killpoint.contract.workflow import Workflow
from killpoint.fake_services.journal import AppliedEffect
from killpoint.harness.checkers._common import (
    READABLE,
    cite_effect,
    cite_request,
    ended_as,
    is_mutation,
    ok,
    request_refs,
    unknown,
    violated,
)
from killpoint.harness.history import History
from killpoint.harness.results import EvidenceRef, Verdict

NAME = "single_effect"


def check_single_effect(history: History, workflow: Workflow) -> Verdict:
    groups: dict[tuple[str, str, str], list[AppliedEffect]] = defaultdict(list)
    for effect in history.applied:
        groups[(effect.service, effect.operation, effect.business_key)].append(effect)
    for (service, operation, key), effects in sorted(
        groups.items(), key=lambda kv: kv[1][1].seq if len(kv[1]) > 1 else 1 << 60
    ):
        if len(effects) > 1:
            first, second = effects[0], effects[1]
            return violated(
                NAME,
                f"{service}.{operation} [{key}] took effect {len(effects)} times",
                [cite_effect(first), cite_effect(second)],
                [
                    EvidenceRef(kind="effect", index=first.seq),
                    EvidenceRef(kind="effect", index=second.seq),
                ],
            )
    for expected in history.expected:
        if not expected.irreversible or expected.service in READABLE:
            continue
        sends = [
            r
            for r in history.requests
            if is_mutation(r)
            and r.service == expected.service
            and r.business_key == expected.business_key
        ]
        if len(sends) > 1:
            return violated(
                NAME,
                f"irreversible {expected.service} [{expected.business_key}] was attempted "
                f"{len(sends)} times; an unknown outcome must go to review, not be retried",
                [cite_request(sends[0]), cite_request(sends[1])],
                request_refs(sends[:2]),
            )
    missing = _done_exactly_once(history, groups)
    if missing is not None:
        return missing
    return ok(NAME, f"{len(history.applied)} effect(s), none repeated")


def _done_exactly_once(
    history: History, groups: dict[tuple[str, str, str], list[AppliedEffect]]
) -> Verdict | None:
    """A run done (durably, or by its worker's word) whose expected effect did not take effect
    exactly once; unknown where nothing durable shows whether it was done."""
    # A saga that ends compensated is done too: its scenario expects the original effect and
    # its compensation (a charge and its refund), each exactly once — compensation is not
    # rollback, the undo is an effect of its own.
    final = history.final_status
    if not (history.readable and final in ("completed", "compensated")):
        final = f"{history.claimed_status or final} (its worker's word)"
    done = ended_as(history, "completed")
    if history.expected_status == "compensated" and done is not True:
        done = ended_as(history, "completed", "compensated")
    if done is not False:
        for expected in history.expected:
            count = len(
                groups_for(groups, expected.service, expected.operation, expected.business_key)
            )
            if count != 1 and done is None:  # it may have ended done: nothing durable shows
                return unknown(
                    NAME,
                    f"{_named(expected.service, expected.operation)} "
                    f"[{expected.business_key}] took effect {count} times; whether the run "
                    "was done is not visible without a history reader",
                )
            if count != 1:
                return violated(
                    NAME,
                    f"{final}, but {_named(expected.service, expected.operation)} "
                    f"[{expected.business_key}] took effect {count} times",
                    [
                        f"final checkpoint: status {final} in state {history.final_state}",
                        _journal_line(
                            groups, expected.service, expected.operation, expected.business_key
                        ),
                    ],
                )
    return None


def groups_for(
    groups: dict[tuple[str, str, str], list[AppliedEffect]],
    service: str,
    operation: str | None,
    key: str,
) -> list[AppliedEffect]:
    return [
        e
        for (s, op, k), effects in groups.items()
        if s == service and k == key and operation in (None, op)
        for e in effects
    ]


def _named(service: str, operation: str | None) -> str:
    return service if operation is None else f"{service}.{operation}"


def _journal_line(
    groups: dict[tuple[str, str, str], list[AppliedEffect]],
    service: str,
    operation: str | None,
    key: str,
) -> str:
    """What the journal holds under the key: an `operation` named the step's way (`charge`
    for `create_charge`) finds nothing, and this line shows why."""
    held = sorted(
        f"{op} x{len(e)}" for (s, op, k), e in groups.items() if s == service and k == key
    )
    looked = f"operation {operation!r}" if operation is not None else "any operation"
    holds = ", ".join(held) if held else "nothing"
    return f"looked for {looked}; the {service} journal holds under [{key}]: {holds}"
