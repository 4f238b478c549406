"""SIGKILL the service process and restart it on the same journal: nothing committed is lost."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from killpoint.fake_services import (
    CmsClient,
    Journal,
    OutcomeUnknown,
    PaymentsClient,
    ServiceProcess,
)
from tests.support.service_faults import plan, rule

pytestmark = pytest.mark.realtier


def test_sigkill_and_restart_keep_every_committed_effect(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    with ServiceProcess(path) as server:
        with server.client() as http:
            payments = PaymentsClient(http)
            charges = [payments.create_charge(f"k{n}", f"o{n}", 100, "EUR") for n in range(5)]
        port = server.port
        server.kill()
        assert not server.running
        with Journal.open(path) as journal:
            assert [e.resource_id for e in journal.applied_effects()] == [c.id for c in charges]
        server.start()
        assert server.port == port
        with server.client() as http:
            payments = PaymentsClient(http)
            assert payments.charge_by_key("k3") == charges[3]
            assert payments.create_charge("k0", "o0", 100, "EUR") == charges[0]
            # numbered on after every charge the killed server made (others' ones included)
            assert payments.create_charge("k5", "o5", 100, "EUR").id > charges[-1].id
        assert len(server.journal.applied_effects("payments")) == 6


def test_sigkill_while_the_reply_is_in_flight_keeps_the_committed_effect(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.sqlite"
    with ServiceProcess(path) as server:
        server.set_plan(plan(rule("cms", "create_post", "slow", delay_s=5)))
        outcome: list[str] = []

        def call() -> None:
            with server.client(timeout=10) as http:
                try:
                    CmsClient(http).create_post("s", "t", "b")
                    outcome.append("ok")
                except OutcomeUnknown:
                    outcome.append("info")

        caller = threading.Thread(target=call)
        caller.start()
        deadline = time.monotonic() + 5
        while not server.journal.applied_effects() and time.monotonic() < deadline:
            time.sleep(0.01)
        server.kill()
        caller.join(5)
        assert outcome == ["info"]
        assert server.journal.effects_by_business_key("cms") == {"s": 1}
        server.restart()
        with server.client() as http:
            assert len(CmsClient(http).posts_by_slug("s")) == 1
