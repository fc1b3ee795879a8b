"""Screenshots of the chat page in English and Persian, on a desktop and on a phone.

    python docs/screenshots/make.py [--out docs/screenshots]

Sets the platform up as `manage.py serve` does (migrations, the demo corpus from docs/guide),
signs in as a user it creates with a fresh password, serves the page with daphne on a free
port, asks one question in each language in Chromium and saves:

    chat-en-start.png  chat-en-desktop.png  chat-en-phone.png  chat-en-phone-drawer.png
    chat-fa-start.png  chat-fa-desktop.png  chat-fa-phone.png  chat-fa-phone-drawer.png

(start: the empty page with its example questions).

Answers come from whatever composer is configured (the offline extractive one by default).
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from playwright.sync_api import Page, ViewportSize, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
USER = "screenshots"
DESKTOP = ViewportSize(width=1280, height=800)
PHONE = ViewportSize(width=390, height=844)


@dataclass(frozen=True)
class Language:
    code: str
    locale: str
    question: str


LANGUAGES = (
    Language("en", "en-US", "How do I upload several files at once?"),
    Language("fa", "fa-IR", "چگونه چند فایل را هم‌زمان بارگذاری کنم؟"),
)


def _setup() -> str:
    """Migrate, ingest the demo corpus and (re)create the screenshot user with no conversations;
    returns its password."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from apps.answers.models import Conversation
    from ragplatform.bootstrap import platform_bootstrap

    platform_bootstrap(say=print)
    password = secrets.token_urlsafe(16)
    user, _ = get_user_model().objects.get_or_create(username=USER)
    user.set_password(password)
    user.save()
    Conversation.objects.filter(user=user).delete()  # its own, from an earlier run
    return password


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _serve(port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
    server = subprocess.Popen([*command, "ragplatform.asgi:application"], cwd=ROOT)  # noqa: S603
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return server
        time.sleep(0.2)
    server.terminate()
    raise SystemExit("daphne did not start")


def _shoot(url: str, password: str, out: Path) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        for language in LANGUAGES:
            desktop = browser.new_context(locale=language.locale, viewport=DESKTOP)
            page = desktop.new_page()
            _log_in(page, url, password)
            page.screenshot(path=out / f"chat-{language.code}-start.png")
            page.locator("#question").fill(language.question)
            page.locator("#ask-button").click()
            page.wait_for_selector("li.turn .answer:not(.streaming)", timeout=120_000)
            page.wait_for_timeout(500)  # the list refresh and the follow-ups settle
            page.screenshot(path=out / f"chat-{language.code}-desktop.png")
            conversation = page.url
            phone = browser.new_context(
                locale=language.locale, viewport=PHONE, is_mobile=True, has_touch=True
            )
            page = phone.new_page()
            _log_in(page, conversation, password)
            page.screenshot(path=out / f"chat-{language.code}-phone.png")
            page.locator("#drawer-button").tap()
            page.wait_for_timeout(400)  # the drawer slides in
            page.screenshot(path=out / f"chat-{language.code}-phone-drawer.png")
            desktop.close()
            phone.close()
        browser.close()


def _log_in(page: Page, url: str, password: str) -> None:
    page.goto(url)
    page.locator("#id_username").fill(USER)
    page.locator("#id_password").fill(password)
    page.locator("form.sign-in button[type=submit]").click()
    page.wait_for_selector("#chat[data-connected]")  # the socket is open


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    password = _setup()
    port = _free_port()
    server = _serve(port)
    try:
        _shoot(f"http://127.0.0.1:{port}/", password, args.out)
    finally:
        server.terminate()
        server.wait(timeout=10)
    print(f"Saved the screenshots under {args.out}")


if __name__ == "__main__":
    main()
