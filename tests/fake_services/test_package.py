from __future__ import annotations

import ast
import inspect
from pathlib import Path

from killpoint import fake_services

PACKAGE = Path(fake_services.__file__).parent


def test_exported_names_are_pinned() -> None:
    assert sorted(fake_services.__all__) == sorted(
        [
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
    )
    for name in fake_services.__all__:
        assert getattr(fake_services, name) is not None


OURS = ("killpoint.harness", "killpoint.scenarios", "killpoint.reports", "harness", "scenarios")


def test_fake_services_import_nothing_from_the_harness() -> None:
    for source in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith(OURS), (source.name, name)


def test_every_endpoint_is_async() -> None:
    with fake_services.InProcessServices() as services:
        for route in services.app.routes:
            endpoint = getattr(route, "endpoint", None)
            assert endpoint is not None
            assert inspect.iscoroutinefunction(endpoint), route
