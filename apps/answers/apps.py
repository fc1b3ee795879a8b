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


class AnswersConfig(AppConfig):
    name = "apps.answers"
    label = "answers"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.answers.turn.leases import turns_interrupt_lapsed
        from ragplatform.periodic import periodic_register

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
