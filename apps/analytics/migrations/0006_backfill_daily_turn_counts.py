"""Fill the daily counts from the turns stored before they were kept, so the dashboard
shows history from the first deploy on (later days are kept by the turn-end step)."""

from typing import Any

from django.db import migrations
from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

BANDS = ("green", "yellow", "red")


def backfill(apps: Any, schema_editor: Any) -> None:
    Turn = apps.get_model("answers", "Turn")
    DailyTurnCount = apps.get_model("analytics", "DailyTurnCount")
    grouped = (
        Turn.objects.annotate(day=TruncDate("created_at", tzinfo=timezone.get_default_timezone()))
        .order_by()
        .values("day", "composer")
        .annotate(
            turns=Count("pk"),
            refused=Count("pk", filter=Q(refused=True)),
            rated=Count("confidence"),
            confidence_sum=Sum("confidence", default=0.0),
            **{band: Count("pk", filter=Q(confidence_band=band)) for band in BANDS},
            fallbacks=Count("pk", filter=~Q(fallback_reason="")),
        )
    )
    DailyTurnCount.objects.bulk_create(
        [DailyTurnCount(**row) for row in grouped], ignore_conflicts=True
    )


class Migration(migrations.Migration):
    dependencies = [
        ("analytics", "0005_daily_turn_counts"),
        ("answers", "0001_conversations_turns_events_citations"),
    ]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
