"""The router's labelled set and evaluation runs move from analytics to answers.

Only Django's state moves: the tables keep their names (`db_table`), so no row is copied.
The content types are relabelled too, so permissions already granted keep applying.
"""

from django.apps.registry import Apps
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor

MOVED = ("labelledquery", "routerevaluation")


def _relabel(apps: Apps, old: str, new: str) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    for model in MOVED:
        if not content_type.objects.filter(app_label=new, model=model).exists():
            content_type.objects.filter(app_label=old, model=model).update(app_label=new)


def forwards(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _relabel(apps, "analytics", "answers")


def backwards(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _relabel(apps, "answers", "analytics")


class Migration(migrations.Migration):
    dependencies = [
        ("answers", "0002_turn_intent_and_action_known"),
        # The tables as analytics left them: created in 0001, context in 0003, names in 0004.
        ("analytics", "0004_plural_names"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    state_operations = [
        migrations.CreateModel(
            name="RouterEvaluation",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("classifier", models.CharField(max_length=40)),
                ("dataset", models.CharField(max_length=300)),
                ("split", models.CharField(blank=True, max_length=20)),
                ("examples", models.PositiveIntegerField()),
                ("accuracy", models.FloatField()),
                ("macro_f1", models.FloatField()),
                ("latency_ms_p50", models.FloatField()),
                ("latency_ms_p95", models.FloatField()),
                ("report", models.JSONField()),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "db_table": "analytics_routerevaluation",
                "ordering": ["-created_at"],
            },
        ),
        migrations.CreateModel(
            name="LabelledQuery",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("text", models.TextField()),
                ("intent", models.CharField(max_length=32)),
                ("tier", models.CharField(max_length=2)),
                ("language", models.CharField(max_length=8)),
                (
                    "split",
                    models.CharField(
                        choices=[
                            ("train", "Train"),
                            ("test", "Test"),
                            ("unseen", "Unseen (generalisation)"),
                        ],
                        max_length=8,
                    ),
                ),
                ("context", models.TextField(blank=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "verbose_name_plural": "labelled queries",
                "db_table": "analytics_labelledquery",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("text", "split"), name="analytics_labelled_query_once"
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            (
                                "intent__in",
                                [
                                    "factual_question",
                                    "search",
                                    "comparison",
                                    "procedural",
                                    "conversational",
                                ],
                            )
                        ),
                        name="analytics_labelled_query_intent_known",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("tier__in", ["T0", "T1", "T2", "T3"])),
                        name="analytics_labelled_query_tier_known",
                    ),
                ],
            },
        ),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=state_operations),
        migrations.RunPython(forwards, backwards),
    ]
