"""Refused-question counts by an integer: each distinct text once in `QuestionText`, the day
rows pointing at it, and the same rows summed by month, so the dashboard's "most often refused"
list sums a year's months of integers instead of every day's texts.

Every row kept so far (every cut, every day) is converted here, and the month rows are summed
from them, so the list reads the same after the upgrade without a refresh.
"""

import django.db.models.deletion
from django.db import migrations, models

# The digest as `models.question_digest` computes it in Python.
DIGEST = "encode(sha256(convert_to({}, 'UTF8')), 'hex')"

TEXTS = f"""
INSERT INTO analytics_questiontext (digest, text)
SELECT DISTINCT ON (digest) digest, asked
FROM (SELECT {DIGEST.format("asked")} AS digest, asked FROM analytics_dailyrefusedquestion) rows
ORDER BY digest;
UPDATE analytics_dailyrefusedquestion d SET question_id = t.id
FROM analytics_questiontext t WHERE t.digest = {DIGEST.format("d.asked")};
"""
TEXTS_BACK = """
UPDATE analytics_dailyrefusedquestion d SET asked = t.text
FROM analytics_questiontext t WHERE t.id = d.question_id;
"""
MONTHS = """
INSERT INTO analytics_monthlyrefusedquestion
    (month, collection, "group", category, question_id, turns)
SELECT date_trunc('month', day)::date, collection, "group", category, question_id, SUM(turns)
FROM analytics_dailyrefusedquestion
GROUP BY 1, 2, 3, 4, 5;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('analytics', '0012_daily_refused_questions'),
    ]

    operations = [
        migrations.CreateModel(
            name='QuestionText',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('digest', models.CharField(max_length=64, unique=True)),
                ('text', models.TextField()),
            ],
            options={
                'constraints': [models.CheckConstraint(condition=models.Q(('digest', models.Func(models.Func(models.Func(models.F('text'), models.Value('UTF8'), function='convert_to'), function='sha256'), models.Value('hex'), function='encode', output_field=models.CharField()))), name='analytics_question_text_digest_is_sha256')],
            },
        ),
        # Both before the texts move, so that going back fills the texts in before the old
        # column is required again and the old constraint on it is checked.
        migrations.RemoveConstraint(
            model_name='dailyrefusedquestion',
            name='analytics_daily_refused_question_once',
        ),
        migrations.AlterField(
            model_name='dailyrefusedquestion',
            name='question',
            field=models.TextField(null=True),
        ),
        # The text column steps aside for the key, so no relation is ever renamed.
        migrations.RenameField(
            model_name='dailyrefusedquestion',
            old_name='question',
            new_name='asked',
        ),
        migrations.AddField(
            model_name='dailyrefusedquestion',
            name='question',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='analytics.questiontext'),
        ),
        migrations.RunSQL(TEXTS, TEXTS_BACK),
        migrations.RemoveField(
            model_name='dailyrefusedquestion',
            name='asked',
        ),
        migrations.AlterField(
            model_name='dailyrefusedquestion',
            name='question',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='analytics.questiontext'),
        ),
        migrations.AddConstraint(
            model_name='dailyrefusedquestion',
            constraint=models.UniqueConstraint(fields=('collection', 'group', 'category', 'day', 'question'), include=('turns',), name='analytics_daily_refused_question_once'),
        ),
        migrations.CreateModel(
            name='MonthlyRefusedQuestion',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('month', models.DateField()),
                ('collection', models.PositiveIntegerField(default=0)),
                ('group', models.PositiveIntegerField(default=0)),
                ('category', models.PositiveIntegerField(default=0)),
                ('turns', models.PositiveIntegerField()),
                ('question', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='analytics.questiontext')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('collection', 'group', 'category', 'month', 'question'), include=('turns',), name='analytics_monthly_refused_question_once'), models.CheckConstraint(condition=models.Q(('month__day', 1), ('turns__gte', 1)), name='analytics_monthly_refused_question_counted_month')],
            },
        ),
        migrations.RunSQL(MONTHS, migrations.RunSQL.noop),
    ]
