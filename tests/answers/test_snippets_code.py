"""A search snippet and a citation's snippet are plain text: a code block's lines are kept,
its fence marks are not (the answer itself quotes the block as code)."""

from __future__ import annotations

import pytest

from apps.answers.routing.types import Intent
from apps.corpus.ingestion.services import (
    collection_get_or_create,
    document_process,
    document_submit,
)
from apps.corpus.text import fence_marks_removed
from tests.answers.fakes import FixedClassifier, classification, providers_fake, turn_collected
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db

DEPLOYMENT = b"""# Deployment

## Reverse proxy

An nginx example for two web processes:

```nginx
upstream app {
    server 127.0.0.1:8001;
    server 127.0.0.1:8002;
}
```

Reload nginx after changing its configuration.
"""


def _ingest(embedder: CountingEmbedder) -> None:
    collection = collection_get_or_create(name="Ops", public=True)
    submitted = document_submit(collection=collection, filename="deploy.md", data=DEPLOYMENT)
    document_process(document_id=submitted.document.pk, embedder=embedder)


def test_fence_lines_and_cut_fences_go_and_the_code_stays() -> None:
    assert fence_marks_removed("Run this:\n```sh\npython manage.py ingest\n```\nDone.") == (
        "Run this:\npython manage.py ingest\nDone."
    )
    assert fence_marks_removed("… example: ``` upstream app {") == "… example:  upstream app {"
    assert fence_marks_removed("no `inline` code changes") == "no `inline` code changes"


def test_a_search_snippet_shows_the_code_without_its_fences(embedder: CountingEmbedder) -> None:
    _ingest(embedder)
    search = FixedClassifier(result=classification(Intent.SEARCH))

    _, events = turn_collected(
        providers_fake(embedder, classifier=search), "nginx upstream example"
    )

    results = next(e["data"]["results"] for e in events if e["type"] == "search_results")
    assert "upstream" in results[0]["snippet_html"] and "```" not in results[0]["snippet_html"]


def test_a_citation_snippet_shows_the_code_without_its_fences(embedder: CountingEmbedder) -> None:
    _ingest(embedder)

    _, events = turn_collected(
        providers_fake(embedder), "Show me the nginx example for two web processes"
    )

    snippets = [e["data"]["snippet"] for e in events if e["type"] == "citation"]
    assert snippets and any("server 127.0.0.1:8001;" in s for s in snippets)
    assert not any("```" in s for s in snippets)
