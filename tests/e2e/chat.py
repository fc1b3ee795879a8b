"""The chat page driven in a real browser: the test user's password, asking a question, waiting
for the server side to catch up."""

from __future__ import annotations

import time
from collections.abc import Callable

from playwright.sync_api import Page

PASSWORD = "a-long-e2e-password"


def ask(page: Page, question: str) -> None:
    page.get_by_label("Question").fill(question)
    page.get_by_role("button", name="Ask", exact=True).click()


def wait_for(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)
