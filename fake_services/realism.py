"""The rules that make the fakes as unkind as the real APIs they imitate (README.md names each).

An engine tested against a service that answers every read at once and holds nothing but the
run's own objects learns nothing about the reads that lag and the lookups that find a stranger's
object. Each rule here can be switched off alone (`ACTIVE`), which is how a test shows that the
rule, and nothing else, exposes a mistake. Every draw is a hash of the run's seed (the fault
plan's, which the harness sets to the run id) and of the object's ordinal in the run, never of a
clock or of the key's text: the same run gets the same lags and the same neighbours on every
replay, runs with other seeds sample the distribution, and a run whose keys differ only by a
run counter (a Hypothesis example) draws the same as its twin.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Realism:
    """Which rules the services apply; all are on unless a test turns one off."""

    # publisher: a publication shows on reads only after a lag drawn from LAG_*
    visibility_lag: bool = True
    # payments: other customers' charges already carry the run's order ids
    other_customers: bool = True
    # outbound: a sent message shows in the search only after a lag drawn from SEARCH_*
    search_lag: bool = True
    seed: str = ""  # mixed into every draw, with the run's own seed


ACTIVE = Realism()

# The lag of a read behind its write (S3 listings, search indexes, CDN caches): most writes are
# visible at once, the rest after an exponentially distributed delay, bounded so a reader that
# backs off over a few reads (1 + 2 + 4 s) always sees it.
LAG_VISIBLE_AT_ONCE = 0.6
LAG_MEAN_S = 1.5
LAG_MAX_S = 6.0


def _unit(*parts: object) -> float:
    """A number in [0, 1) drawn from the parts' hash: the same parts, the same number."""
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _late(realism: Realism, seed: str, what: str, ordinal: int, at_once: float) -> float | None:
    """None for an object drawn to show at once, else where in [0, 1) its lag falls."""
    u = _unit(realism.seed, seed, what, ordinal)
    return None if u < at_once else (u - at_once) / (1 - at_once)


def visibility_lag_s(realism: Realism, seed: str, ordinal: int) -> float:
    """How long the run's `ordinal`-th publication stays invisible to reads (0: at once)."""
    tail = _late(realism, seed, "lag", ordinal, LAG_VISIBLE_AT_ONCE)
    if not realism.visibility_lag or tail is None:
        return 0.0
    return round(min(LAG_MAX_S, -LAG_MEAN_S * math.log(1 - tail)), 3)


# The lag of a provider's message search behind its sends (Mailgun's events "follow different
# routes to the event storage", and a page of them is trustworthy only past a threshold age):
# half the messages show at once, the rest within SEARCH_WINDOW_S, the threshold past which a
# searcher may take absence as proof.
SEARCH_AT_ONCE = 0.5
SEARCH_WINDOW_S = 1.0


def search_lag_s(realism: Realism, seed: str, ordinal: int) -> float:
    """How long the run's `ordinal`-th message stays out of the search (0: at once)."""
    tail = _late(realism, seed, "search", ordinal, SEARCH_AT_ONCE)
    if not realism.search_lag or tail is None:
        return 0.0
    return round(SEARCH_WINDOW_S * tail, 3)


@dataclass(frozen=True)
class Neighbour:
    """Another customer's charge under an order id the run uses too (order ids are per shop)."""

    customer: str
    idempotency_key: str
    amount_cents: int
    age_s: float


def neighbours(realism: Realism, seed: str, ordinal: int) -> list[Neighbour]:
    """The one or two charges other customers made, before the run began, under the run's
    `ordinal`-th order id."""
    if not realism.other_customers:
        return []
    count = 1 + int(_unit(realism.seed, seed, "count", ordinal) * 2)
    found = []
    for n in range(count):
        u = _unit(realism.seed, seed, "neighbour", ordinal, n)
        tag = hashlib.sha256(f"{realism.seed}:{seed}:{ordinal}:{n}".encode()).hexdigest()[:12]
        found.append(
            Neighbour(
                customer=f"cus_{tag}",
                idempotency_key=f"other-{tag}",
                amount_cents=500 + int(u * 50_000),
                age_s=86_400.0 * (1 + n + u),
            )
        )
    return found
