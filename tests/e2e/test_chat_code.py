"""Code in a real browser: an answer quoting a configuration shows it as <pre><code>, left to
right, with a copy button that copies the block (Clipboard API) and says so, in the streamed
answer, in the same answer replayed after a reload, and in the source preview of its passage.

The server, database and login are the e2e fixtures'; the document is ingested through the
real pipeline (parsing, chunking into a fenced block), the answer scripted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Locator, Page, expect

from apps.answers.providers.registry import providers_override
from apps.corpus.ingestion.services import (
    collection_get_or_create,
    document_process,
    document_submit,
)
from tests.answers.fakes import ScriptedComposer, providers_fake
from tests.conftest import CountingEmbedder
from tests.e2e.chat import ask

pytestmark = pytest.mark.django_db(transaction=True)

NGINX = """upstream app {
    server 127.0.0.1:8001;
    server 127.0.0.1:8002;
}
server {
    listen 80;
    location / { proxy_pass http://app; }
}"""
GUIDE = f"""# Deployment

The application runs as two web processes behind a reverse proxy.

An nginx example for two web processes:

```nginx
{NGINX}
```
"""
ANSWER = ("An nginx example for two web processes [c1]:", f"\n\n```\n{NGINX}\n```")
QUESTION = "Show me the nginx configuration example"
CLIPBOARD = ["clipboard-read", "clipboard-write"]


@pytest.fixture
def proxy_guide(embedder: CountingEmbedder) -> Iterator[None]:
    collection = collection_get_or_create(name="Operations", public=True)
    result = document_submit(collection=collection, filename="deploy.md", data=GUIDE.encode())
    document_process(document_id=result.document.pk, embedder=embedder)
    scripted = ScriptedComposer(pieces_for=lambda q: ANSWER)
    with providers_override(providers_fake(embedder, composer=scripted)):
        yield


def _copies(page: Page, block: Locator) -> None:
    """The block's button, reached by keyboard, copies the code and says it did."""
    button = block.locator("button.code-copy")
    expect(button).to_have_accessible_name("Copy code")
    button.focus()
    page.keyboard.press("Enter")
    expect(button).to_have_attribute("data-state", "copied")
    expect(button).to_have_text("Code copied.")
    expect(block.locator("[role=status]")).to_have_text("Code copied.")
    assert page.evaluate("navigator.clipboard.readText()") == NGINX


def _is_code(block: Locator) -> None:
    expect(block.locator("pre > code")).to_have_text(NGINX)
    expect(block).to_have_attribute("dir", "ltr")


@pytest.mark.browser_context_args(permissions=CLIPBOARD)
def test_an_answer_s_code_block_renders_as_code_with_a_working_copy_button(
    chat_page: Page, proxy_guide: None
) -> None:
    page = chat_page
    ask(page, QUESTION)
    answer = page.locator("li.turn").first.locator(".answer")
    expect(answer).not_to_have_class(re.compile(r"streaming"), timeout=20_000)
    expect(answer.locator(".answer-text p").first).to_contain_text("An nginx example")
    block = answer.locator(".answer-text .code-block")
    _is_code(block)
    _copies(page, block)

    page.reload()  # the stored answer, written again from its text
    block = page.locator("li.turn").first.locator(".answer-text .code-block")
    _is_code(block)
    _copies(page, block)

    page.locator("li.turn").first.locator(".answer-text a.chip").first.click()
    passage = page.locator("#source-panel .source-chunk")
    expect(passage).to_contain_text("An nginx example for two web processes:")
    block = passage.locator(".code-block")
    _is_code(block)
    expect(passage).not_to_contain_text("```")
    _copies(page, block)
