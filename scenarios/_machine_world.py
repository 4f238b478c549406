"""What the stateful machine's examples share: the store of a process, and the counting of
fault decisions that lets a rule added mid-run name "the next request" as a replay would."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

from killpoint.fake_services import FaultPlan, InProcessServices
from killpoint.harness.protocol import StoreHandle
from killpoint.harness.run.world import TENANT


class DecisionTally:
    """Counts the services' fault decisions per (service, operation) since the plan was set.

    A rule added mid-run must name "the next request" with an occurrence counted from the start
    of the run, which is how a replay (one plan, installed once) counts it.
    """

    def __init__(self, services: InProcessServices) -> None:
        self.injector = services.faults
        self._decide = services.faults.decide
        self.counts: Counter[tuple[str, str]] = Counter()
        setattr(self.injector, "decide", self.decide)  # noqa: B010 - wrap this instance only

    def decide(self, service: str, operation: str) -> Any:
        self.counts[(service, operation)] += 1
        return self._decide(service, operation)

    def install(self, plan: FaultPlan) -> None:
        """Install `plan` with its counters where they would be had it been there all along."""
        self.injector.set_plan(plan)
        for (service, operation), n in self.counts.items():
            for _ in range(n):
                self._decide(service, operation)


@cache
def shared_store() -> StoreHandle:
    """One database per process for every example, and what engines keep open on it."""
    root = Path(tempfile.mkdtemp(prefix="killpoint-machines-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    url = f"sqlite:///{root / 'store.sqlite'}"
    handle = StoreHandle(url, root, TENANT, url, scratch=False)
    atexit.register(handle.shared.close)
    return handle
