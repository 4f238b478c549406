from __future__ import annotations

import httpx

from killpoint.fake_services import InProcessServices, MailerClient
from killpoint.fake_services.mailer import message_key


def test_every_send_is_an_effect_keyed_by_recipient_and_subject(
    services: InProcessServices, http: httpx.Client
) -> None:
    mailer = MailerClient(http)
    mailer.send("ann@example.com", "Your order", "shipped")
    mailer.send("ann@example.com", "Your order", "shipped")
    mailer.send("bob@example.com", "Your order", "shipped")
    counts = services.journal.effects_by_business_key("mailer")
    assert counts[message_key("ann@example.com", "Your order")] == 2
    assert counts[message_key("bob@example.com", "Your order")] == 1


def test_mailer_offers_no_lookup(http: httpx.Client) -> None:
    assert http.get("/mailer/messages").status_code == 405
    assert http.get("/mailer/messages/msg_000001").status_code == 404
