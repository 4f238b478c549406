"""What every effect adapter does alike: translate the services' outcomes without loss, hash a
receipt, read an intent's operation and arguments."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from pydantic import JsonValue

from killpoint import fake_services as fs
from killpoint.contract.errors import DefinitionError, EffectRejected, OutcomeUnknown
from killpoint.contract.records import EffectIntent, Receipt
from killpoint.scenarios._common import json_bytes


@contextmanager
def translated(service: str, operation: str) -> Iterator[None]:
    """Map the services' outcomes onto the engine's: unknown stays unknown, 4xx is definite."""
    try:
        yield
    except fs.OutcomeUnknown as exc:
        raise OutcomeUnknown(f"{service} {operation}: {exc}") from exc
    except fs.Rejected as exc:
        raise EffectRejected(f"{service} {operation}: {exc}") from exc


def receipt_of(resource_id: str, document: Mapping[str, Any], **detail: JsonValue) -> Receipt:
    digest = hashlib.sha256(json_bytes(dict(document))).hexdigest()
    return Receipt(resource_id=resource_id, result_hash=digest, detail=dict(detail))


def operation_of(intent: EffectIntent) -> str:
    """The service operation an intent names; a batch item may suffix it (`create_post#3`)."""
    return intent.operation.partition("#")[0]


def unknown_operation(service: str, intent: EffectIntent) -> DefinitionError:
    return DefinitionError(f"{service} has no effect operation {intent.operation!r}")


def arg_str(intent: EffectIntent, name: str) -> str:
    return str(intent.args[name])


def arg_int(intent: EffectIntent, name: str) -> int:
    value = intent.args[name]
    if not isinstance(value, int):
        raise DefinitionError(f"{intent.operation}: argument {name!r} must be an int")
    return value
