from __future__ import annotations

import hashlib

import factory
from django.core.files.base import ContentFile

from apps.analytics.models import Category
from apps.answers.models import (
    Citation,
    CitationKind,
    Conversation,
    RouterEvaluation,
    Turn,
    TurnEvent,
    TurnStatus,
)
from apps.corpus.models import Chunk, Collection, Document, DocumentStatus


class CollectionFactory(factory.django.DjangoModelFactory[Collection]):
    class Meta:
        model = Collection

    name = factory.Sequence(lambda n: f"Collection {n}")
    description = "Test documents"
    public = True  # readable by every signed-in user unless a test is about access


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class DocumentFactory(factory.django.DjangoModelFactory[Document]):
    """A processed document with a real stored file; pass `content=` for other bytes."""

    class Meta:
        model = Document

    class Params:
        content = factory.LazyAttribute(lambda d: f"# {d.filename}\n\nSome text.\n".encode())

    collection = factory.SubFactory(CollectionFactory)
    filename = factory.Sequence(lambda n: f"document-{n}.md")
    title = factory.LazyAttribute(lambda d: d.filename.rsplit(".", 1)[0])
    mime_type = "text/markdown"
    sha256 = factory.LazyAttribute(lambda d: _sha256(d.content))
    size_bytes = factory.LazyAttribute(lambda d: len(d.content))
    file = factory.LazyAttribute(lambda d: ContentFile(d.content, name=d.filename))
    language = "en"
    status = DocumentStatus.READY
    progress = 100
    indexed_sha256 = factory.LazyAttribute(lambda d: d.sha256)


class ChunkFactory(factory.django.DjangoModelFactory[Chunk]):
    class Meta:
        model = Chunk

    document = factory.SubFactory(DocumentFactory)
    index = factory.Sequence(int)
    text = factory.Sequence(lambda n: f"Chunk {n}: employees take twenty-six days of leave.")
    heading = "Leave policy"
    char_start = 0
    char_end = factory.LazyAttribute(lambda c: len(c.text))
    token_count = factory.LazyAttribute(lambda c: len(c.text.split()))
    language = "en"
    content_hash = factory.LazyAttribute(lambda c: _sha256(c.text.encode()))
    embedding = factory.LazyFunction(lambda: [1.0] + [0.0] * 383)
    embedding_model = "test/hashed-bow"
    search_config = "english"


# --- Answers and analytics -------------------------------------------------------------------


class ConversationFactory(factory.django.DjangoModelFactory[Conversation]):
    class Meta:
        model = Conversation

    title = factory.Sequence(lambda n: f"Conversation {n}")


class TurnFactory(factory.django.DjangoModelFactory[Turn]):
    """A finished, answered turn; pass fields (status, trace, timings...) to shape the audit."""

    class Meta:
        model = Turn

    conversation = factory.SubFactory(ConversationFactory)
    index = factory.Sequence(lambda n: n + 1)
    question = factory.Sequence(lambda n: f"How many days of leave do I get? ({n})")
    answer = "Employees take twenty-six days of annual leave a year."
    status = TurnStatus.FINISHED
    language = "en"
    intent = "factual_question"
    router_confidence = 0.9
    tier = "T1"
    strategy = "simple"
    action = "answer"
    confidence = 0.8
    confidence_band = "green"
    composer = "extractive"


class TurnEventFactory(factory.django.DjangoModelFactory[TurnEvent]):
    class Meta:
        model = TurnEvent

    turn = factory.SubFactory(TurnFactory)
    seq = factory.Sequence(lambda n: n + 1)
    type = "token"
    data = factory.LazyFunction(lambda: {"text": "Employees take "})


class CitationFactory(factory.django.DjangoModelFactory[Citation]):
    """A citation copied from a real chunk, as the turn pipeline stores it."""

    class Meta:
        model = Citation

    turn = factory.SubFactory(TurnFactory)
    alias = factory.Sequence(lambda n: f"c{n + 1}")
    kind = CitationKind.CITED
    chunk = factory.SubFactory(ChunkFactory)
    document = factory.LazyAttribute(lambda c: c.chunk.document if c.chunk else None)
    title = factory.LazyAttribute(lambda c: c.document.title if c.document else "")
    source_file = factory.LazyAttribute(lambda c: c.document.filename if c.document else "")
    page = factory.LazyAttribute(lambda c: c.chunk.page if c.chunk else None)
    snippet = factory.LazyAttribute(lambda c: c.chunk.text[:400] if c.chunk else "")
    position = None


class CategoryFactory(factory.django.DjangoModelFactory[Category]):
    class Meta:
        model = Category
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"Category {n}")
    description = factory.LazyAttribute(lambda c: f"Questions about {c.name.lower()}.")
    active = True


ROUTER_INTENTS = ["factual_question", "search", "comparison", "procedural", "conversational"]
ROUTER_REPORT = {
    "labels": ROUTER_INTENTS,
    "confusion": [
        [41, 2, 0, 1, 0],
        [3, 17, 0, 0, 0],
        [0, 0, 12, 0, 0],
        [4, 0, 0, 20, 0],
        [0, 0, 0, 0, 15],
    ],
    "per_class": {
        i: {"precision": 0.9, "recall": 0.8, "f1": 0.85, "support": 10} for i in ROUTER_INTENTS
    },
}


class RouterEvaluationFactory(factory.django.DjangoModelFactory[RouterEvaluation]):
    """An `evaluate_router` run with a small, fixed report (confusion matrix, per intent)."""

    class Meta:
        model = RouterEvaluation

    classifier = "trained"
    dataset = "labelled_queries.jsonl"
    split = "test"
    examples = 115
    accuracy = 0.871
    macro_f1 = 0.842
    latency_ms_p50 = 0.4
    latency_ms_p95 = 0.9
    report = ROUTER_REPORT
