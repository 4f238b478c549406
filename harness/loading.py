"""Reading a JSON document a user hands killpoint (a fault schedule, a campaign result).

Whatever the file holds, the outcome is the model or one `KillpointError` line naming the file
and what is wrong: not readable, not UTF-8, not JSON, or the first field that does not fit. The
model is validated strictly (no number read from a string, no count from `true`), since
killpoint writes these files with exact types, and a figure within its bounds: no count below
zero, no NaN or infinity, no count past what JSON readers elsewhere hold, no time past 10^12 s
(no run's clock gets there: a jump is at most a year; 1.7e308 s overflowed the report's log
axis).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, Field, ValidationError

from killpoint.contract.errors import KillpointError

M = TypeVar("M", bound=BaseModel)

MAX_SECONDS = 1e12
Count = Annotated[int, Field(ge=0, le=2**63 - 1)]
Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS)]


def exact_int(value: object) -> object:
    """For a `Literal` version field: pydantic matches a literal by equality, even strictly, so
    `true` and `1.0` would pass for 1."""
    if isinstance(value, bool | float):
        raise ValueError(f"a version is an integer, not {type(value).__name__}")
    return value


Version1 = Annotated[Literal[1], BeforeValidator(exact_int)]


def load_json(path: str | Path, model: type[M], noun: str) -> M:
    """The `model` in the file at `path`: a killpoint `noun` (fault schedule, campaign result)."""
    what = f"a killpoint {noun}"
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise KillpointError(f"{path} is not {what}: not UTF-8 text") from None
    except OSError as exc:
        raise KillpointError(f"cannot read {noun.split()[-1]} {path}: {exc.strerror}") from exc
    try:
        return model.model_validate_json(text, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise KillpointError(f"{path} is not {what}: {where}: {first['msg']}") from exc
