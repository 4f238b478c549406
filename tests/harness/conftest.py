"""Fixtures of the engine tests: in-process fake services and a started workflow."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from fake_services import InProcessServices
from harness import Engine, FakeClock, Store
from tests.harness.flows import make_engine


@pytest.fixture
def services() -> Iterator[InProcessServices]:
    with InProcessServices() as running:
        yield running


@pytest.fixture
def http(services: InProcessServices) -> Iterator[httpx.Client]:
    with services.client(timeout=1.0) as client:
        yield client


@pytest.fixture
def engine(store: Store, clock: FakeClock, tmp_path: Path, checkpoint_key: bytes) -> Engine:
    """A worker with only the pure workflows (no services needed)."""
    return make_engine(store, clock, tmp_path)
