"""The secrets an engine is handed and must never store, and where a worker process finds them.

An engine needs secrets to work — a key to seal its checkpoints with, a token for the services
it calls — and seed 000 says what it must do with them: "Do not serialize secrets into a
checkpoint simply because they were present in memory. Save references to secret-manager
entries". The harness hands every worker the same values in two ways, so an engine of any
kind finds them: typed, in `WorkerEnv.secrets`, and in the environment under the names below
(a forked worker inherits it; a command is started with it). They are canaries: random for
each world, and after each run the oracle looks for them wherever the engine could have kept
them (`killpoint.harness.run.canary_scan`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

# where the reference engine's `SecretRef` reads its sealing key, and a team's engine may too
CHECKPOINT_KEY_ENV = "KILLPOINT_CHECKPOINT_KEY"
# the services' bearer token, which `WorkerEnv.http` already sends as `Authorization: Bearer …`
SERVICE_TOKEN_ENV = "KILLPOINT_SERVICE_TOKEN"


@dataclass(frozen=True)
class Secrets:
    """The secret values of one world; never shown in a repr, a report or a verdict (a finding
    names a secret by its field name, never by its value)."""

    checkpoint_key: str = field(repr=False)  # seal checkpoints with it ($KILLPOINT_CHECKPOINT_KEY)
    service_token: str = field(repr=False)  # the services' bearer token ($KILLPOINT_SERVICE_TOKEN)

    def named(self) -> Iterator[tuple[str, str]]:
        """(name, value) of each secret, the name as findings report it."""
        yield "checkpoint_key", self.checkpoint_key
        yield "service_token", self.service_token

    def environ(self) -> dict[str, str]:
        """The environment variables that hold them."""
        return {CHECKPOINT_KEY_ENV: self.checkpoint_key, SERVICE_TOKEN_ENV: self.service_token}
