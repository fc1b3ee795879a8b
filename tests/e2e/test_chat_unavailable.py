"""The chat page when the server cannot reach its database: the socket's typed `unavailable`
event and close code 4503 show "Reconnecting…" and are retried, never a trip to the login
page (which is what 4401, a login that has ended, means).

The server and login are the e2e fixtures' (daphne in a thread, the test database); the
unreachable database is played by a route that answers the page's first sockets the way the
server does during an outage (tests/answers/test_consumer_unavailable.py checks the server).
"""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, WebSocketRoute, expect

pytestmark = pytest.mark.django_db(transaction=True)

UNAVAILABLE = {
    "seq": 0,
    "turn": None,
    "type": "failed",
    "data": {"code": "unavailable", "message": "The database is unreachable."},
}


def test_an_unavailable_close_shows_reconnecting_and_retries_until_connected(
    chat_page: Page,
) -> None:
    page = chat_page
    sockets: list[WebSocketRoute] = []
    outage = {"left": 2}

    def through(route: WebSocketRoute) -> None:
        sockets.append(route)
        if outage["left"]:  # the database is still down: what the server says then
            outage["left"] -= 1
            route.send(json.dumps(UNAVAILABLE))
            route.close(code=4503, reason="unavailable")
            return
        route.connect_to_server()

    page.route_web_socket(re.compile(r"/ws/chat/$"), through)
    chat_url = page.url
    page.reload()

    expect(page.locator("#connection")).to_have_text("Reconnecting…")
    expect(page.locator("main.chat")).to_have_class(re.compile("reconnecting"))
    # Back once the database is: connected, on the same page, still signed in.
    expect(page.locator("main.chat")).to_have_attribute("data-connected", "true")
    expect(page.locator("#connection")).to_have_text("")
    assert page.url == chat_url and "/accounts/login/" not in page.url
    assert len(sockets) == 3
