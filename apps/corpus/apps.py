from django.apps import AppConfig


class CorpusConfig(AppConfig):
    name = "apps.corpus"
    label = "corpus"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.corpus import checks  # noqa: F401 - registers the pgvector check
