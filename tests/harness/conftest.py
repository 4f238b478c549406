"""Fixtures of the engine tests: reference-engine workers over the test's store (the services,
the store and the clock are the shared fixtures of tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import httpx
import pytest

from killpoint.harness.contract.boundaries import BoundaryHook
from killpoint.harness.contract.clock import FakeClock
from killpoint.harness.engine.dispatcher import Engine
from killpoint.harness.engine.store import Store
from killpoint.scenarios.adapters import adapters_for
from tests.conftest import OpenStore
from tests.harness.flows import make_engine
from tests.harness.loader_inputs import File


@pytest.fixture
def engine(store: Store, clock: FakeClock, tmp_path: Path, checkpoint_key: bytes) -> Engine:
    """A worker with only the pure workflows (no services needed)."""
    return make_engine(store, clock, tmp_path)


class NewWorker(Protocol):
    def __call__(self, hook: BoundaryHook | None = None, **kwargs: Any) -> Engine: ...


@pytest.fixture
def new_worker(
    open_store: OpenStore,
    clock: FakeClock,
    tmp_path: Path,
    http: httpx.Client,
    checkpoint_key: bytes,
) -> NewWorker:
    """Start a worker as a restarted process would: its own Store, Engine and adapters."""

    def start(hook: BoundaryHook | None = None, **kwargs: Any) -> Engine:
        return make_engine(open_store(), clock, tmp_path, adapters_for(http), hook=hook, **kwargs)

    return start


@pytest.fixture
def file(tmp_path: Path) -> File:
    """The test's one input file, rewritten with each example's bytes."""

    def holding(data: bytes) -> Path:
        path = tmp_path / "input.json"
        path.write_bytes(data)
        return path

    return holding
