from django.apps import AppConfig
from django.conf import settings


class AnswersConfig(AppConfig):
    name = "apps.answers"
    label = "answers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.answers.leases import turns_interrupt_lapsed
        from ragplatform.periodic import periodic_register

        # Turns whose process died are failed as interrupted within about a lease and a half.
        periodic_register(
            name="answers.turns_interrupt_lapsed",
            every_s=lambda: settings.RAG_TURN_LEASE_S / 2,
            run=turns_interrupt_lapsed,
        )
