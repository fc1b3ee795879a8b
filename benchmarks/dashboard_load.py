"""Dashboard load at a year of traffic: response time and query count from the daily counts.

    nice -n 10 .venv/bin/python benchmarks/dashboard_load.py [--turns 1000000] [--days 365]
        [--repeat 7] [--keep] [--reuse] [--database ragbench_dashboard]

Works in its own database (`--database`, by default `ragbench_dashboard`) on the embedded
PostgreSQL server (or on the server of DATABASE_URL), never in the platform's. It migrates that
database (timed), seeds `--turns` turns spread over the last `--days` days with one INSERT ...
SELECT generate_series per table (conversations, turns, the categories decided at each turn,
feedback, citations), runs the daily-count refresh for every day (timed), then requests the
dashboard through Django's test client in every role that may open it: a superuser (every
panel, the two question lists included), an analyst (the aggregates only) and an analyst who is
also an auditor (the question lists too, with the document lists cut to the collections it may
read), for a 30-day and a 365-day range (and as a superuser for a year filtered to one
category): the median of `--repeat` timed requests after one warm-up, and the number of SQL
queries each request ran. `--reuse` measures again a database kept (`--keep`) from an earlier
run, without seeding or counting; the database is dropped at the end unless `--keep`. A copy of
a kept database (`CREATE DATABASE b TEMPLATE a`) lets two versions of the code be measured in
turn on the same seeded turns, each migrating its own copy (`--database b`).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATABASE = "ragbench_dashboard"
# Every role that may open the dashboard, with the groups (migration 0008's roles) it is in:
# auditors may read turns, so one who is also an analyst sees the question lists.
ROLES = {"superuser": (), "analyst": ("analysts",), "analyst+auditor": ("analysts", "auditors")}

# The columns each bulk INSERT sets, as SQL over the row number `n` (and, for turns, a random
# confidence `c`); every other column of the model gets its Django default, so a column added
# later does not break the seeding. %(turns)s, %(days)s and the ids made before are parameters.
CONVERSATION = {
    "id": "md5('c' || n)::uuid",
    "user_id": "CASE WHEN n %% 10 = 0 THEN NULL ELSE %(first_user)s + n %% %(users)s END",
    "title": "'Bench ' || n",
    "created_at": "now()",
    "updated_at": "now()",
}
TURN = {
    "conversation_id": "md5('c' || (1 + (n - 1) / 10))::uuid",
    "index": "1 + (n - 1) %% 10",
    "question": "'Bench question ' || (n::bigint * 7919) %% 2000",
    "answer": "'An answer.'",
    "status": "'finished'",
    "intent": "(%(intents)s::text[])[1 + n %% cardinality(%(intents)s::text[])]",
    "readable_collections": "CASE n %% 4 WHEN 0 THEN NULL "
    "ELSE jsonb_build_array(%(first_collection)s + n %% 3) END",
    "confidence": "c",
    "confidence_band": "CASE WHEN c >= 0.7 THEN 'green' WHEN c >= 0.4 THEN 'yellow' ELSE 'red' END",
    "refused": "c < 0.15",
    "refusal_reason": "CASE WHEN c < 0.15 THEN 'Not in the documents' ELSE '' END",
    "composer": "CASE WHEN n %% 5 = 0 THEN 'openai:smollm2' ELSE 'extractive' END",
    "fallback_reason": "CASE WHEN n %% 50 = 0 THEN 'chat model timed out' ELSE '' END",
    "timings_ms": "jsonb_build_object('total_ms', "
    "round((300 + 9000 * power(random(), 3))::numeric, 1), 'compose_ms', 200)",
    # Spread evenly over the days, newest a minute ago.
    "created_at": "now() - (%(days)s * interval '1 day') * ((n - 1)::float / %(turns)s) "
    "- interval '1 minute'",
}
TURN_FROM = (
    "FROM (SELECT n, round(random()::numeric, 3)::float AS c "
    "FROM generate_series(1, %(turns)s) n) s"
)
TURN_CATEGORY = {
    "turn_id": "t.id",
    "category_id": "%(first_category)s + t.id %% %(categories)s",
    "score": "0.8",
    "assigned_by": "'bench'",
    "decided_at": "now()",
}
FEEDBACK = {
    "turn_id": "t.id",
    "rating": "CASE WHEN t.id %% 3 = 0 THEN 'down' ELSE 'up' END",
    "created_at": "now()",
    "updated_at": "now()",
}
CITATION = {
    "turn_id": "t.id",
    "alias": "'c1'",
    "kind": "'cited'",
    "document_id": "%(first_document)s + t.id %% %(documents)s",
    "title": "'Bench document'",
}


def main() -> None:
    args = _arguments()
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)  # progress as it goes
    _django_setup(args.database)
    from django.db import connection

    try:
        started = time.perf_counter()
        _migrate()
        print(f"migrate: {time.perf_counter() - started:.1f} s")
        if args.reuse and _turns() >= args.turns:
            print(f"turns: {_turns():,}  (reused, seeded and counted before)")
        else:
            _seed(turns=args.turns, days=args.days)
            refresh_s = _refresh(days=args.days)
            print(
                f"turns: {_turns():,}  daily-count refresh of {args.days} days: {refresh_s:.1f} s"
            )
        print("load average: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
        print(
            "refused-question rows (every cut): {:,} by day, {:,} by month, {:,} texts".format(
                *_refused_rows()
            )
        )
        for role in ROLES:
            client = _client(role)
            for days in (30, 365):
                median, queries = _measure(client, days, args.repeat)
                print(f"{role:>17} {days:>3}-day range: median {median:7.1f} ms, {queries} queries")
        # A category filter reads other rows of the same counts: the same queries.
        category = _first_category()
        median, queries = _measure(_client("superuser"), 365, args.repeat, category=category)
        print(f"superuser 365-day range, one category: median {median:7.1f} ms, {queries} queries")
    finally:
        connection.close()
        if not args.keep:
            _drop(args.database)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the benchmark database")
    parser.add_argument("--reuse", action="store_true", help="measure a kept database again")
    parser.add_argument("--database", default=DATABASE, help="the benchmark's own database")
    args = parser.parse_args()
    if args.turns < 10 or args.days < 1 or args.repeat < 1:
        parser.error("--turns must be at least 10, --days and --repeat at least 1")
    return args


def _django_setup(name: str = DATABASE) -> None:
    sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
    import django
    from django.conf import settings

    django.setup()
    # Before the first connection: everything below runs in the benchmark's own database.
    database = settings.DATABASES["default"]
    database["NAME"] = name
    if "EMBEDDED_DATABASE" in database:
        database["EMBEDDED_DATABASE"] = name
    settings.ALLOWED_HOSTS = ["testserver"]


def _migrate() -> None:
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _turns() -> int:
    from apps.answers.models import Turn

    return Turn.objects.count()


def _refused_rows() -> tuple[int, int, int]:
    from apps.analytics.models import DailyRefusedQuestion, MonthlyRefusedQuestion, QuestionText

    return (
        DailyRefusedQuestion.objects.count(),
        MonthlyRefusedQuestion.objects.count(),
        QuestionText.objects.count(),
    )


def _seed(*, turns: int, days: int) -> None:
    from django.db import connection, transaction

    from apps.analytics.models import TurnCategory
    from apps.answers.models import Citation, Conversation, Turn, TurnFeedback
    from apps.answers.routing.types import Intent

    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        intents = [intent.value for intent in Intent]
        params: dict[str, Any] = {"turns": turns, "days": days, "intents": intents, **_small_rows()}
        every_turn = "FROM answers_turn t"
        statements = [
            _insert(Conversation, CONVERSATION, "FROM generate_series(1, %(turns)s / 10) n"),
            _insert(Turn, TURN, TURN_FROM),
            _insert(TurnCategory, TURN_CATEGORY, every_turn + " WHERE t.id %% 5 <> 0"),
            _insert(TurnFeedback, FEEDBACK, every_turn + " WHERE t.id %% 20 = 0"),
            _insert(Citation, CITATION, every_turn + " WHERE NOT t.refused AND t.id %% 3 <> 0"),
        ]
        for statement, defaults in statements:
            cursor.execute(statement, params | defaults)
        cursor.execute("ANALYZE")
    print(f"seeded in {time.perf_counter() - started:.1f} s")


def _small_rows() -> dict[str, int]:
    """Collections, groups, users, categories and documents, through the ORM (few rows)."""
    from django.contrib.auth.models import Group, User

    from apps.analytics.models import Category
    from apps.corpus.models import Collection, Document

    collections = [Collection.objects.create(name=f"bench collection {n}") for n in range(3)]
    groups = [Group.objects.create(name=f"bench group {n}") for n in range(3)]
    users = User.objects.bulk_create(User(username=f"bench-user-{n}") for n in range(300))
    for n, user in enumerate(users):
        user.groups.add(*groups[: n % 4])
    categories = Category.objects.bulk_create(
        Category(name=f"bench category {n}", description="synthetic") for n in range(12)
    )
    documents = Document.objects.bulk_create(
        Document(
            collection=collections[n % 3], filename=f"bench-{n}.md", title=f"Bench document {n}",
            mime_type="text/markdown", sha256=f"{n:064x}", size_bytes=100, file=f"bench/{n}.md",
            status="ready", progress=100,
        )
        for n in range(40)
    )  # fmt: skip
    return {
        "first_collection": collections[0].pk,
        "first_user": users[0].pk,
        "users": len(users),
        "first_category": categories[0].pk,
        "categories": len(categories),
        "first_document": documents[0].pk,
        "documents": len(documents) - 3,  # the last three are never cited
    }


def _insert(model: Any, columns: dict[str, str], source: str) -> tuple[str, dict[str, Any]]:
    """INSERT ... SELECT setting `columns`, and every other column to its Django default."""
    from django.db.models import JSONField

    exprs, defaults = dict(columns), {}
    for field in model._meta.concrete_fields:
        if field.column in exprs or field.primary_key:  # ids: the sequence, unless set
            continue
        value = field.get_default()
        defaults[f"default_{field.column}"] = (
            json.dumps(value) if isinstance(field, JSONField) else value
        )
        cast = "::jsonb" if isinstance(field, JSONField) else ""
        exprs[field.column] = f"%(default_{field.column})s{cast}"
    table = model._meta.db_table
    names = ", ".join(f'"{c}"' for c in exprs)
    return f"INSERT INTO {table} ({names}) SELECT {', '.join(exprs.values())} {source}", defaults


def _refresh(*, days: int) -> float:
    from apps.analytics.selectors import local_period
    from apps.analytics.services import daily_counts_refresh_range

    first, last = local_period(days=days + 1)
    started = time.perf_counter()
    daily_counts_refresh_range(first=first, last=last)
    return time.perf_counter() - started


def _client(role: str) -> Any:
    from django.contrib.auth.models import Group, User
    from django.test import Client

    superuser = role == "superuser"
    user, _ = User.objects.get_or_create(
        username=f"bench-{role.replace(' ', '-')}",
        defaults={"is_staff": True, "is_superuser": superuser},
    )
    user.groups.add(*Group.objects.filter(name__in=ROLES[role]))
    client = Client()
    client.force_login(user)
    return client


def _first_category() -> int:
    from apps.analytics.models import Category

    return Category.objects.filter(name__startswith="bench category").order_by("pk")[0].pk


def _measure(
    client: Any, days: int, repeat: int, *, category: int | None = None
) -> tuple[float, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    query = {"range": days} | ({"category": category} if category else {})

    def get() -> Any:
        response = client.get("/admin/analytics/category/dashboard/", query)
        assert response.status_code == 200, response.status_code
        return response

    get()  # warm-up: templates, the planner's statistics, shared buffers
    timings = [_timed(get) for _ in range(repeat)]
    with CaptureQueriesContext(connection) as captured:
        get()
    return statistics.median(timings), len(captured)


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def _drop(name: str) -> None:
    import psycopg
    from django.conf import settings
    from django.db import connections

    connections.close_all()
    # With DATABASE_POOL (the default) closing only hands the connections back to the pool,
    # which keeps them open: DROP DATABASE would find them.
    close_pool = getattr(connections["default"], "close_pool", None)  # PostgreSQL's backend
    if close_pool is not None:
        close_pool()
    params = connections["default"].get_connection_params()
    params["dbname"] = "postgres"
    params.pop("database", None)
    with psycopg.connect(**params, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
    print(f"dropped {name} ({settings.DATABASES['default']['ENGINE']})")


if __name__ == "__main__":
    main()
