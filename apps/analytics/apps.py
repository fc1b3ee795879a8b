from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "apps.analytics"
    label = "analytics"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from apps.analytics.tasks import feedback_changed, turn_end_enqueue
        from apps.answers.models import TurnFeedback
        from apps.answers.turn.end_steps import turn_end_step_register

        turn_end_step_register(name="analytics", step=turn_end_enqueue)
        # The chat page writes feedback; the counts follow it without answers knowing of them.
        post_save.connect(feedback_changed, sender=TurnFeedback, dispatch_uid="analytics-feedback")
        post_delete.connect(
            feedback_changed, sender=TurnFeedback, dispatch_uid="analytics-feedback-gone"
        )
