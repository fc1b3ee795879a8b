from datetime import timedelta

from django.apps import AppConfig
from django.conf import settings
from django.utils import timezone

PURGE_EVERY_S = 3600.0  # the retention is counted in days: hourly is prompt enough


def conversations_retention_purge() -> int:
    """The periodic job: drop deleted conversations past their retention (none if it is 0)."""
    from apps.answers.conversations.services import conversations_deleted_purge

    days = settings.RAG_DELETED_CONVERSATION_RETENTION_DAYS
    if days == 0:
        return 0
    return conversations_deleted_purge(deleted_before=timezone.now() - timedelta(days=days))


def sentence_vectors_sweep() -> int:
    """The periodic job: vectors unclaimed for a sweep interval deleted, and a fill queued while
    chunks lack theirs (documents ingested before vectors were stored, a fill that failed)."""
    from apps.answers.sentence_vectors.selectors import chunks_unfilled
    from apps.answers.sentence_vectors.services import sentence_vectors_orphans_delete
    from apps.answers.tasks import sentence_vectors_task
    from apps.corpus.search.embedders import configured_model_id

    interval = timedelta(seconds=settings.RAG_SENTENCE_VECTORS_SWEEP_S)
    deleted = sentence_vectors_orphans_delete(unused_before=timezone.now() - interval)
    if settings.RAG_SENTENCE_VECTORS and chunks_unfilled(model_id=configured_model_id()).exists():
        sentence_vectors_task.enqueue(None)
    return deleted


class AnswersConfig(AppConfig):
    name = "apps.answers"
    label = "answers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.answers.tasks import chunks_swapped_enqueue
        from apps.answers.turn.leases import turns_interrupt_lapsed
        from apps.corpus.ingestion.signals import chunks_swapped
        from ragplatform.periodic import periodic_register

        # Corpus never imports answers: it says when a document's chunks are in, and answers
        # queues the composer's sentence vectors for them.
        chunks_swapped.connect(chunks_swapped_enqueue, dispatch_uid="answers-sentence-vectors")
        periodic_register(
            name="answers.sentence_vectors_sweep",
            every_s=lambda: settings.RAG_SENTENCE_VECTORS_SWEEP_S,
            run=sentence_vectors_sweep,
        )

        periodic_register(
            name="answers.conversations_retention_purge",
            every_s=lambda: PURGE_EVERY_S,
            run=conversations_retention_purge,
        )
        # Turns whose process died are failed as interrupted within about a lease and a half.
        periodic_register(
            name="answers.turns_interrupt_lapsed",
            every_s=lambda: settings.RAG_TURN_LEASE_S / 2,
            run=turns_interrupt_lapsed,
        )
