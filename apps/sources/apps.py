from django.apps import AppConfig


class SourcesConfig(AppConfig):
    name = "apps.sources"
    label = "sources"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.conf import settings

        from apps.sources.sync.schedule import sources_due_enqueue
        from ragplatform.periodic import periodic_register

        # Every worker runs it; a source is claimed by one conditional UPDATE, so two workers
        # never start the same sync.
        periodic_register(
            name="sources.due_enqueue",
            every_s=lambda: settings.RAG_SOURCE_SWEEP_S,
            run=sources_due_enqueue,
        )
