from django.apps import AppConfig


class CorpusConfig(AppConfig):
    name = "apps.corpus"
    label = "corpus"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.conf import settings

        from apps.corpus import checks  # noqa: F401 - registers the pgvector check
        from apps.corpus.documents.originals import originals_cleanup_connect
        from apps.corpus.ingestion.sweeps import documents_reclaim
        from apps.corpus.uploads.kept import kept_uploads_expire
        from ragplatform.periodic import periodic_register

        originals_cleanup_connect()
        # Run by every `manage.py worker`; both are safe to run in several workers at once.
        periodic_register(
            name="corpus.documents_reclaim",
            every_s=lambda: settings.RAG_DOCUMENT_SWEEP_S,
            run=documents_reclaim,
        )
        periodic_register(
            name="corpus.kept_uploads_expire",
            every_s=lambda: settings.RAG_DOCUMENT_SWEEP_S,
            run=kept_uploads_expire,
        )
