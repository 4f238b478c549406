"""Small helpers the scenario modules share: typed reads of JSON input and of earlier receipts.

A step only sees JSON (`JsonValue`) from its checkpoint; these helpers turn it into the `str` and
`int` a step needs, failing loudly when a scenario's own input is malformed, so each workflow
module reads as its state machine and nothing else.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from pydantic import JsonValue

from killpoint.contract.context import StepContext
from killpoint.contract.errors import DefinitionError
from killpoint.contract.records import EffectStatus, Receipt

DONE = (EffectStatus.COMMITTED, EffectStatus.VERIFIED, EffectStatus.COMPENSATED)


def text(values: Mapping[str, JsonValue], name: str) -> str:
    value = values.get(name)
    if not isinstance(value, str):
        raise DefinitionError(f"expected a string at {name!r}, got {value!r}")
    return value


def number(values: Mapping[str, JsonValue], name: str) -> int:
    value = values.get(name)
    if not isinstance(value, int) or isinstance(value, bool):
        raise DefinitionError(f"expected an integer at {name!r}, got {value!r}")
    return value


def record(values: Mapping[str, JsonValue], name: str) -> dict[str, JsonValue]:
    value = values.get(name)
    if not isinstance(value, dict):
        raise DefinitionError(f"expected an object at {name!r}, got {value!r}")
    return value


def receipt_of(ctx: StepContext, step: str) -> Receipt:
    """The receipt of the (single) effect an earlier step committed."""
    for effect in ctx.effects_of(step):
        if effect.status in DONE and effect.receipt is not None:
            return effect.receipt
    raise DefinitionError(f"step {ctx.step!r} needs a committed effect of {step!r}")


def json_bytes(value: JsonValue) -> bytes:
    """Deterministic JSON: the same value is the same bytes, so the same artifact hash."""
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def load_json(data: bytes) -> dict[str, JsonValue]:
    value = json.loads(data)
    if not isinstance(value, dict):
        raise DefinitionError("artifact is not a JSON object")
    return value


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
