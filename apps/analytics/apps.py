from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "apps.analytics"
    label = "analytics"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.analytics import receivers  # noqa: F401 - connects the post-turn step
