from django.apps import AppConfig


class CorpusConfig(AppConfig):
    name = "apps.corpus"
    label = "corpus"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.corpus import checks  # noqa: F401 - registers the pgvector check
        from apps.corpus.originals import originals_cleanup_connect

        originals_cleanup_connect()
