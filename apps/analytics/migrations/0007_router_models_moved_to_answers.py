"""The router's labelled set and evaluation runs now belong to answers (its migration 0002).

State only: the tables stay where they are, answers' models use them under the same names.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("analytics", "0006_backfill_daily_turn_counts"),
        ("answers", "0003_router_labelled_queries_and_evaluations_from_analytics"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="LabelledQuery"),
                migrations.DeleteModel(name="RouterEvaluation"),
            ]
        ),
    ]
