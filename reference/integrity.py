"""Canonical JSON, hashes and the HMAC seal that makes a stored checkpoint trustworthy.

The seal is checked over the stored bytes *before* anything is parsed, so a tampered row is never
deserialized. The tenant is bound into the tag, so a checkpoint copied to another tenant fails the
same way. The key is never stored: only the name of the environment variable that holds it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from typing import Any

from killpoint.contract.secrets import CHECKPOINT_KEY_ENV
from killpoint.reference.errors import IntegrityError, SecretMissingError, WeakKeyError

DEFAULT_KEY_ENV = CHECKPOINT_KEY_ENV  # the contract names it: the harness hands the key there
MIN_KEY_BYTES = 32  # an HMAC-SHA256 key shorter than its output is the weak link of the seal


@dataclass(frozen=True)
class SecretRef:
    """A reference to a secret held outside the checkpoint; resolved again on every resume.

    A key shorter than `MIN_KEY_BYTES` is refused unless `allow_weak` (demo and scratch use)."""

    env: str = DEFAULT_KEY_ENV
    allow_weak: bool = False

    def resolve(self) -> bytes:
        value = os.environ.get(self.env)
        if not value:
            raise SecretMissingError(f"secret reference ${self.env} is not set")
        key = value.encode()
        if not self.allow_weak:
            check_key(key, self.env)
        return key


def check_key(key: bytes, env: str = DEFAULT_KEY_ENV) -> None:
    """Refuse a checkpoint key too short to make a seal unforgeable."""
    if len(key) < MIN_KEY_BYTES:
        raise WeakKeyError(
            f"${env} holds a {len(key)}-byte key; checkpoint keys need at least "
            f"{MIN_KEY_BYTES} bytes (e.g. `openssl rand -hex 32`)"
        )


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Any) -> bytes:
    """One byte string per value: sorted keys, no spaces, UTF-8."""
    return _CANONICAL.encode(value).encode()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def input_hash(value: Any) -> str:
    return "sha256:" + sha256_hex(canonical_json(value))


def output_link(previous: str, sequence: int, step: str, value_sha256: str) -> str:
    """The next link of a run's output chain: order, place and content of each output."""
    return sha256_hex(f"{previous}\x00{sequence}\x00{step}\x00{value_sha256}".encode())


def seal(body: bytes, tenant: str, key: bytes) -> str:
    return "hmac-sha256:" + hmac.digest(key, tenant.encode() + b"\x00" + body, "sha256").hex()


def verify_seal(body: bytes, tenant: str, tag: str, key: bytes) -> None:
    # compare_digest takes ASCII text only: an edited tag column may hold any
    if not (tag.isascii() and hmac.compare_digest(seal(body, tenant, key), tag)):
        raise IntegrityError("checkpoint integrity tag does not match its bytes")
