from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "apps.analytics"
    label = "analytics"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.analytics.tasks import turn_end_enqueue
        from apps.answers.turn_end import turn_end_step_register

        turn_end_step_register(name="analytics", step=turn_end_enqueue)
