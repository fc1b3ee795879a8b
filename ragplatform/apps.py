from django.apps import AppConfig


class RagplatformConfig(AppConfig):
    """The project itself as an app, so that project-wide commands (`serve`) live beside settings."""

    name = "ragplatform"
    label = "ragplatform"

    def ready(self) -> None:
        from django.conf import settings

        from ragplatform.periodic import periodic_register
        from ragplatform.workers import workers_prune

        periodic_register(
            name="ragplatform.workers_prune",
            every_s=lambda: settings.RAG_WORKER_STALE_S,
            run=workers_prune,
        )
