"""What a worker of the reference engine is and holds to, whatever workflow it runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from killpoint.contract.records import DeployNotice
from killpoint.reference.compat import CompatibilityPolicy
from killpoint.reference.integrity import SecretRef

# The tenant of a worker or operator that names none (the demo, the harness's scratch stores).
# It is a tenant like any other: acting for it never reaches a named tenant's workflows.
DEFAULT_TENANT = "default"


@dataclass(frozen=True)
class Settings:
    """The tenant it acts for, its name and lease, the key it seals with, and its policies.

    `owner=None` gives each worker a fresh name: two workers are two owners, as two processes
    would be."""

    tenant: str = DEFAULT_TENANT
    owner: str | None = None
    lease_ttl: float = 30.0
    secret: SecretRef = field(default_factory=SecretRef)
    compatibility: CompatibilityPolicy = field(default_factory=CompatibilityPolicy)
    policy_version: str = "policy@1"  # recorded with every approval request
    # a deploy in progress: what this worker does with a run of the other version (`deploy`)
    deploy: DeployNotice | None = None
    # the queue's max attempts: how many deliveries may find a run mid-flight before it is
    # dead-lettered for a person (`deadletter`); None never dead-letters
    max_deliveries: int | None = 20
