"""Stored sentence vectors: what a fill stores, reuse on re-ingestion, orphans, the queueing after
ingestion, and the seam the composer reads them by (real PostgreSQL, the hashed fake model)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import numpy as np
import pytest
from asgiref.sync import async_to_sync
from django.conf import LazySettings
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from apps.answers.apps import sentence_vectors_sweep
from apps.answers.composing import ExtractiveComposer
from apps.answers.composing.vectors import text_hash
from apps.answers.sentence_vectors.models import ChunkSentences, SentenceVector
from apps.answers.sentence_vectors.selectors import chunks_unfilled
from apps.answers.sentence_vectors.services import (
    sentence_vectors_fill,
    sentence_vectors_orphans_delete,
)
from apps.answers.sentence_vectors.stored import StoredSentenceVectors
from apps.answers.sentence_vectors.texts import chunk_sentence_texts
from apps.corpus.ingestion.services import document_process, document_submit
from apps.corpus.models import Chunk, Document, DocumentStatus
from apps.corpus.search.legs import chunks_hydrate
from tests.answers.fakes import handbook_load, providers_fake, turn_collected
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db

SHARED = "Ask the service desk about anything this page does not cover."
DOCUMENTS = {
    "leave.md": "# Leave\n\nEmployees take twenty-six days of annual leave every year. "
    f"Requests go to your manager.\n\n- Sick leave needs a note\n- Parental leave is paid\n\n{SHARED}",
    "vpn.md": "# VPN\n\nThe company VPN uses WireGuard. Install the client and import the "
    f"profile.\n\n{SHARED}",
}
TASK = "apps.answers.tasks.sentence_vectors_task"


def _texts_by_chunk() -> dict[int, list[str]]:
    rows = chunks_hydrate(list(Chunk.objects.values_list("pk", flat=True)))
    return {chunk_id: chunk_sentence_texts(row) for chunk_id, row in rows.items()}


def _filled(embedder: CountingEmbedder) -> dict[int, list[str]]:
    handbook_load(embedder, documents=DOCUMENTS)
    sentence_vectors_fill(embedder=embedder)
    return _texts_by_chunk()


def test_a_fill_stores_the_vector_of_each_distinct_text_of_the_composers_sentences_once(
    embedder: CountingEmbedder,
) -> None:
    handbook_load(embedder, documents=DOCUMENTS)
    before = embedder.passages_embedded

    result = sentence_vectors_fill(embedder=embedder)

    texts = _texts_by_chunk()
    distinct = {t for chunk_texts in texts.values() for t in chunk_texts}
    held = [t for chunk_texts in texts.values() for t in chunk_texts]
    assert held.count(SHARED) == 2  # in both documents' chunks ...
    assert SentenceVector.objects.count() == len(distinct) < len(held)  # ... stored once
    assert embedder.passages_embedded - before == len(distinct) == result.embedded
    assert result.chunks == len(texts) == ChunkSentences.objects.count()
    for row in ChunkSentences.objects.all():
        assert row.text_hashes == [text_hash(t) for t in texts[row.chunk_id]]
        assert row.embedding_model == embedder.model_id
    # The list items are stored as the composer embeds them: with their section's words.
    assert any(
        t.startswith("Sick leave needs a note") and t != "Sick leave needs a note" for t in distinct
    )
    for vector in SentenceVector.objects.all():
        text = next(t for t in distinct if text_hash(t) == vector.text_hash)
        made = embedder.embed_passages([text])[0].astype(np.float32)  # the column's precision
        np.testing.assert_array_equal(np.asarray(vector.embedding, dtype=np.float32), made)
    assert sentence_vectors_fill(embedder=embedder).chunks == 0  # nothing left to fill


def test_reingestion_reuses_the_stored_vectors_of_unchanged_texts(
    embedder: CountingEmbedder,
) -> None:
    _filled(embedder)
    kept = dict(SentenceVector.objects.values_list("text_hash", "pk"))
    leave = Document.objects.get(filename="leave.md")
    changed = DOCUMENTS["leave.md"].replace(
        "manager.", "manager. Leave is booked in the HR portal."
    )
    document_submit(collection=leave.collection, filename="leave.md", data=changed.encode())
    document_process(document_id=leave.pk, embedder=embedder)
    assert chunks_unfilled(model_id=embedder.model_id).count() == 1  # the changed chunk
    before = embedder.passages_embedded

    result = sentence_vectors_fill(embedder=embedder)

    assert embedder.passages_embedded - before == result.embedded == 1  # the new sentence only
    assert result.reused == result.texts - 1
    after = dict(SentenceVector.objects.values_list("text_hash", "pk"))
    assert all(after.get(key, pk) == pk for key, pk in kept.items())  # same rows, not rewritten


def test_a_deleted_documents_vectors_are_swept_after_an_interval_and_shared_ones_stay(
    embedder: CountingEmbedder,
) -> None:
    texts = _filled(embedder)
    vpn = Document.objects.get(filename="vpn.md")
    vpn_chunks = set(vpn.chunks.values_list("pk", flat=True))
    vpn_texts = {t for chunk_id in vpn_chunks for t in texts[chunk_id]}
    other_texts = {t for chunk_id, ts in texts.items() if chunk_id not in vpn_chunks for t in ts}
    stored = SentenceVector.objects.count()

    vpn.delete()

    assert not ChunkSentences.objects.filter(chunk_id__in=vpn_chunks).exists()  # cascaded
    # Unclaimed, but claimed within the interval: a fill could be reusing them right now.
    assert sentence_vectors_orphans_delete(unused_before=timezone.now() - timedelta(hours=1)) == 0
    orphans = vpn_texts - other_texts
    deleted = sentence_vectors_orphans_delete(unused_before=timezone.now() + timedelta(seconds=1))
    assert deleted == len(orphans) > 0
    assert SentenceVector.objects.count() == stored - len(orphans)
    left = set(SentenceVector.objects.values_list("text_hash", flat=True))
    assert text_hash(SHARED) in left and left == {text_hash(t) for t in other_texts}


def test_a_fill_claims_the_vectors_it_reuses_so_a_sweep_beside_it_keeps_them(
    embedder: CountingEmbedder,
) -> None:
    _filled(embedder)
    long_ago = timezone.now() - timedelta(days=1)
    SentenceVector.objects.update(seen_at=long_ago)
    ChunkSentences.objects.all().delete()  # every vector unclaimed, as after a re-ingestion

    sentence_vectors_fill(embedder=embedder)  # the chunks claim them again

    assert not SentenceVector.objects.filter(seen_at=long_ago).exists()
    assert sentence_vectors_orphans_delete(unused_before=timezone.now() - timedelta(hours=1)) == 0


def test_swapped_chunks_queue_a_fill_after_the_commit_and_the_document_is_ready_before_it(
    embedder: CountingEmbedder, django_capture_on_commit_callbacks: object
) -> None:
    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        handbook_load(embedder, documents=DOCUMENTS)

    assert set(Document.objects.values_list("status", flat=True)) == {DocumentStatus.READY}
    assert not ChunkSentences.objects.exists()  # nothing filled in the ingesting call
    queued = DBTaskResult.objects.filter(task_path=TASK)
    ids = sorted(Document.objects.values_list("pk", flat=True))
    assert sorted(r.args_kwargs["args"][0] for r in queued) == ids


def test_with_stored_vectors_turned_off_nothing_is_queued(
    embedder: CountingEmbedder, settings: LazySettings, django_capture_on_commit_callbacks: object
) -> None:
    settings.RAG_SENTENCE_VECTORS = False
    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        handbook_load(embedder, documents=DOCUMENTS)
    assert sentence_vectors_sweep() == 0
    assert not DBTaskResult.objects.filter(task_path=TASK).exists()


def test_the_sweep_queues_a_fill_while_chunks_lack_vectors(embedder: CountingEmbedder) -> None:
    handbook_load(embedder, documents=DOCUMENTS)  # as documents from before vectors were stored

    sentence_vectors_sweep()

    queued = DBTaskResult.objects.filter(task_path=TASK)
    assert [r.args_kwargs["args"] for r in queued] == [[None]]


# ---- the seam ------------------------------------------------------------------------------


def test_stored_vectors_are_read_in_one_query_and_only_texts_without_are_embedded(
    embedder: CountingEmbedder, django_assert_num_queries: object
) -> None:
    texts = _filled(embedder)
    known = [t for chunk_texts in texts.values() for t in chunk_texts][:3]
    asked = [known[0], "A sentence nobody stored.", *known[1:]]
    seam = StoredSentenceVectors(embedder)
    before = embedder.passages_embedded

    with django_assert_num_queries(1):  # type: ignore[operator]
        matrix = async_to_sync(seam.passages)(asked)

    assert embedder.passages_embedded - before == 1
    np.testing.assert_array_equal(matrix, embedder.embed_passages(asked).astype(np.float32))
    assert async_to_sync(seam.passages)([]).shape == (0, embedder.dimensions)


@pytest.mark.parametrize("stored", [True, False])
def test_a_turns_composer_runs_the_model_only_for_sentences_nothing_stored(
    embedder: CountingEmbedder, stored: bool
) -> None:
    _filled(embedder)
    # The composer's own model (the same model id, the same vectors), counted apart from
    # retrieval's and the follow-ups'.
    own = CountingEmbedder()
    composer = ExtractiveComposer(
        own, min_evidence=0.3, vectors=StoredSentenceVectors(own) if stored else None
    )
    providers = replace(providers_fake(embedder), composer=composer)

    turn, _ = turn_collected(providers, "Which protocol does the company VPN use?")

    assert "WireGuard" in turn.answer, turn.refusal_reason
    assert own.queries_embedded == 0  # the question's vector is retrieval's
    assert (own.passages_embedded == 0) is stored
