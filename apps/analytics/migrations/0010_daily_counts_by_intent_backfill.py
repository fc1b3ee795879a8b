"""Re-cut the stored daily counts by intent, so the dashboard's history survives the upgrade.

The rows kept before were per day and composer only. This rebuilds the uncut rows (every
collection, every group) from the turn log; the collection and group cuts, the latency
histogram, and the document counts are filled by `manage.py analytics_refresh --days N`
(docs/guide). Categories per turn were not kept before this release, so their history starts
now.
"""

from typing import Any

from django.db import migrations
from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

BANDS = ("green", "yellow", "red")


def recut(apps: Any, schema_editor: Any) -> None:
    Turn = apps.get_model("answers", "Turn")
    DailyTurnCount = apps.get_model("analytics", "DailyTurnCount")
    DailyTurnCount.objects.all().delete()
    grouped = (
        Turn.objects.annotate(day=TruncDate("created_at", tzinfo=timezone.get_default_timezone()))
        .order_by()
        .values("day", "composer", "intent")
        .annotate(
            turns=Count("pk"),
            refused=Count("pk", filter=Q(refused=True)),
            rated=Count("confidence"),
            confidence_sum=Sum("confidence", default=0.0),
            **{band: Count("pk", filter=Q(confidence_band=band)) for band in BANDS},
            fallbacks=Count("pk", filter=~Q(fallback_reason="")),
            feedback_up=Count("pk", filter=Q(feedback__rating="up")),
            feedback_down=Count("pk", filter=Q(feedback__rating="down")),
        )
    )
    DailyTurnCount.objects.bulk_create([DailyTurnCount(**row) for row in grouped], batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("analytics", "0009_turn_categories_and_cut_daily_counts"),
        ("answers", "0007_turn_feedback"),
    ]

    operations = [migrations.RunPython(recut, migrations.RunPython.noop)]
