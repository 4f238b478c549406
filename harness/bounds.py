"""The bounds of a figure read back from a file: shared by results and what they hold.

A result is read back from files (`killpoint merge`): no count below zero, no NaN or infinity
in a figure, no count past what JSON readers elsewhere hold, no time past 10^12 s (no run's
clock gets there: a jump is at most a year; 1.7e308 s overflowed the report's log axis).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

MAX_SECONDS = 1e12
Count = Annotated[int, Field(ge=0, le=2**63 - 1)]
Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS)]
