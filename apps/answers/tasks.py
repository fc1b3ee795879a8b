"""Background work of answers, run by `manage.py worker` (its dotted paths are stored in the
task queue: it stays here). Tasks only call services."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import transaction
from django_tasks import task

from apps.answers.sentence_vectors.services import sentence_vectors_fill
from apps.corpus.search.embedders import default_embedder

logger = logging.getLogger(__name__)


@task()
def sentence_vectors_task(document_id: int | None = None) -> None:
    """Store the sentence vectors of one document's chunks (None: of every chunk without)."""
    result = sentence_vectors_fill(embedder=default_embedder(), document_id=document_id)
    logger.info("Sentence vectors of document %s: %s", document_id or "(all)", result)


def chunks_swapped_enqueue(sender: type[Any], *, document_id: int, **kwargs: Any) -> None:
    """Corpus's `chunks_swapped` receiver: the document is searchable already; its sentence
    vectors are filled by a task worker after the swap commits, never in the ingesting call."""
    if settings.RAG_SENTENCE_VECTORS:
        transaction.on_commit(lambda: sentence_vectors_task.enqueue(document_id))
