from __future__ import annotations

import pytest

from killpoint.fake_services import ServiceClock


def test_clock_moves_only_when_told() -> None:
    clock = ServiceClock(10.0)
    assert clock.now() == 10.0
    assert clock.advance(2.5) == 12.5
    clock.set(100.0)
    assert clock.now() == 100.0


def test_clock_refuses_to_go_backwards_by_advance() -> None:
    with pytest.raises(ValueError):
        ServiceClock().advance(-1)
