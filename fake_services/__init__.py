"""Fake downstream services with their own durable ground truth and per-request fault modes.

The outside world of killpoint: payments (idempotent), cms (not idempotent), mailer
(irreversible, no lookup), outbound (irreversible, searchable by the sender's metadata, with a
lag), publisher (eventually consistent), artifacts (content-addressed) and files (S3's rules),
served in-process (:class:`InProcessServices`) or as a real HTTP server (:class:`ServiceProcess`).
Each keeps a :class:`Journal` the oracle reads. Nothing here imports ``harness``.
"""

if __name__ != "killpoint.fake_services":  # a checkout's folder, imported by its bare name
    raise ImportError(
        "import killpoint.fake_services, not fake_services: the folder installs under killpoint, "
        "and a second name would load a second copy of every module"
    )

from typing import TYPE_CHECKING, Any

from killpoint.fake_services.app import build_app
from killpoint.fake_services.clients import (
    ArtifactsClient,
    CmsClient,
    FilesClient,
    MailerClient,
    OutboundClient,
    PaymentsClient,
    PublisherClient,
    SearchPage,
)
from killpoint.fake_services.clock import ServiceClock
from killpoint.fake_services.errors import (
    ArtifactCorrupt,
    NotFound,
    OutcomeUnknown,
    Rejected,
    ServiceError,
)
from killpoint.fake_services.faults import Fault, FaultInjector, FaultMode, FaultPlan, FaultRule
from killpoint.fake_services.inprocess import InProcessServices
from killpoint.fake_services.journal import AppliedEffect, Journal, RequestRecord, fingerprint
from killpoint.fake_services.models import (
    Charge,
    FileObject,
    Message,
    OutboundMessage,
    Post,
    Publication,
    Refund,
)
from killpoint.fake_services.transport import FaultInjectingTransport, connect

if TYPE_CHECKING:
    from killpoint.fake_services.server import ServiceProcess


def __getattr__(name: str) -> Any:
    # Imported lazily so `python -m fake_services.server` does not import itself twice.
    if name == "ServiceProcess":
        from killpoint.fake_services.server import ServiceProcess

        return ServiceProcess
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AppliedEffect",
    "ArtifactCorrupt",
    "ArtifactsClient",
    "Charge",
    "CmsClient",
    "Fault",
    "FaultInjectingTransport",
    "FaultInjector",
    "FaultMode",
    "FaultPlan",
    "FaultRule",
    "FileObject",
    "FilesClient",
    "InProcessServices",
    "Journal",
    "MailerClient",
    "Message",
    "NotFound",
    "OutboundClient",
    "OutboundMessage",
    "OutcomeUnknown",
    "PaymentsClient",
    "Post",
    "Publication",
    "PublisherClient",
    "Refund",
    "Rejected",
    "RequestRecord",
    "SearchPage",
    "ServiceClock",
    "ServiceError",
    "ServiceProcess",
    "build_app",
    "connect",
    "fingerprint",
]
