"""How a rate is printed: one function for the tiles, the metrics table and the console, so a
figure reads the same wherever it is shown (6.7 % everywhere, never 6.74 % beside 6.7 %).

One decimal, and never rounded onto an edge: 99.97 % is `>99.9%`, not `100.0%`, and 0.02 % is
`<0.1%`, not `0.0%` — a report that says 100 % must mean every run.
"""

from __future__ import annotations


def percent(value: float | None) -> str:
    """A fraction in [0, 1] as a percentage; `n/a` when nothing was measured."""
    if value is None:
        return "n/a"
    if value in (0.0, 1.0):
        return f"{100 * value:.0f}%"
    text = f"{100 * value:.1f}"
    if text == "100.0":
        return ">99.9%"
    if text == "0.0":
        return "<0.1%"
    return f"{text}%"
