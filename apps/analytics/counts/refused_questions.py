"""Writes of the refused-question counts: a day's rows by the id of each text, the month's rows
moved by exactly what the day's rows changed by, and the texts no row counts any more removed.

One lock serialises these writes across days (the day lock only serialises one day's
refreshes): two days of a month move the same month rows, and a text one day stops counting
may be one another day is about to count. It is taken after the turn log has been read, so
refreshes of different days still overlap in their reading, the slow part.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Set

from django.db import connection
from django.db.models import Exists, OuterRef

from apps.analytics.counts.day_rows import RefusedCounts
from apps.analytics.models import (
    DailyRefusedQuestion,
    MonthlyRefusedQuestion,
    QuestionText,
    question_digest,
)

# Under the daily counts' lock key, second key 0: day locks use the day's ordinal (from 1).
LOCK = (0x0DA1C0, 0)
_COLUMNS = ("collection", "group", "category", "question_id", "turns")
# collection, group, category, question id
Key = tuple[int, int, int, int]


def refused_questions_store(*, day: dt.date, counts: RefusedCounts) -> None:
    """Replace the day's rows with `counts` and keep its month's rows the sum of the month's
    day rows. Runs inside the refresh's transaction, which holds the lock until it commits."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", LOCK)
    rows = DailyRefusedQuestion.objects.filter(day=day)
    before = _keyed(rows.values_list(*_COLUMNS))
    rows.delete()
    ids = question_texts_ensure(texts={text for *_, text in counts})
    after = Counter({(c, g, k, ids[text]): n for (c, g, k, text), n in counts.items()})
    DailyRefusedQuestion.objects.bulk_create(
        (
            DailyRefusedQuestion(day=day, collection=c, group=g, category=k, question_id=q, turns=n)
            for (c, g, k, q), n in after.items()
        ),
        batch_size=1000,
    )
    moved = {key: after[key] - before[key] for key in after.keys() | before.keys()}
    _month_move(day.replace(day=1), {key: n for key, n in moved.items() if n})
    _texts_forget({key[3] for key in before} - {key[3] for key in after})


def question_texts_ensure(*, texts: Set[str]) -> dict[str, int]:
    """The id of each text, adding the texts not stored yet."""
    by_digest = {question_digest(text): text for text in texts}
    found = dict(QuestionText.objects.filter(digest__in=by_digest).values_list("digest", "pk"))
    added = QuestionText.objects.bulk_create(
        QuestionText(digest=digest, text=by_digest[digest])
        for digest in by_digest.keys() - found.keys()
    )
    found |= {text.digest: text.pk for text in added}
    return {text: found[digest] for digest, text in by_digest.items()}


def _keyed(rows: Iterable[tuple[int, int, int, int, int]]) -> Counter[Key]:
    return Counter({(c, g, k, q): n for c, g, k, q, n in rows})


def _month_move(month: dt.date, moved: dict[Key, int]) -> None:
    """Add each key's change to its month row: a row that reaches zero goes, a new key gets a
    row. A month row that would go below zero is a broken sum: the check constraint says so."""
    if not moved:
        return
    table = MonthlyRefusedQuestion._meta.db_table
    keys = list(moved)
    columns = {name: [key[n] for key in keys] for n, name in enumerate(_COLUMNS[:4])}
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            MERGE INTO {table} m
            USING unnest(%(collection)s::integer[], %(group)s::integer[],
                         %(category)s::integer[], %(question_id)s::bigint[], %(moved)s::integer[])
                AS d (collection, grp, category, question_id, moved)
            ON m.month = %(month)s AND m.collection = d.collection AND m."group" = d.grp
               AND m.category = d.category AND m.question_id = d.question_id
            WHEN MATCHED AND m.turns + d.moved = 0 THEN DELETE
            WHEN MATCHED THEN UPDATE SET turns = m.turns + d.moved
            WHEN NOT MATCHED THEN
                INSERT (month, collection, "group", category, question_id, turns)
                VALUES (%(month)s, d.collection, d.grp, d.category, d.question_id, d.moved)
            """,  # noqa: S608 - the table name is the model's; every value is a parameter
            columns | {"moved": [moved[key] for key in keys], "month": month},
        )


def _texts_forget(ids: Set[int]) -> None:
    """Texts the day no longer counts, unless another day still does."""
    if ids:
        counted = DailyRefusedQuestion.objects.filter(question_id=OuterRef("pk"))
        QuestionText.objects.filter(pk__in=ids).exclude(Exists(counted)).delete()
