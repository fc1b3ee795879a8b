"""Where a dashboard request's time goes: each SQL query's median, and what is left for Python.

    PYTHONPATH=. nice -n 5 .venv/bin/python benchmarks/dashboard_profile.py [--repeat 7]
        [--explain 3] [--roles superuser analyst+auditor] [--days 30 365] [--database NAME]

Reads the database `benchmarks/dashboard_load.py --keep` left (`--database`, by default
`ragbench_dashboard`), never seeds, migrates or drops it. For every role and range (and, as a superuser, a year filtered to one
category) it requests the dashboard `--repeat` times after a warm-up, capturing the SQL of each
request: it prints the request's median, the median of the SQL time, and each query's median,
slowest first, with the start of its text. `--explain N` then runs `EXPLAIN (ANALYZE, BUFFERS)`
on the N slowest queries of each request and prints the plans.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks import dashboard_load as load

URL = "/admin/analytics/category/dashboard/"


@dataclass(frozen=True)
class QueryTime:
    sql: str
    median_ms: float


@dataclass(frozen=True)
class Profile:
    request_ms: float
    sql_ms: float
    queries: tuple[QueryTime, ...]  # in the order the request ran them


def main() -> None:
    args = _arguments()
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)
    load._django_setup(args.database)
    print("load average: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    cases: list[tuple[str, int, int | None]] = [
        (role, days, None) for role in args.roles for days in args.days
    ]
    if "superuser" in args.roles:
        cases.append(("superuser", 365, load._first_category()))
    for role, days, category in cases:
        profile = _profile(load._client(role), days, args.repeat, category=category)
        cut = ", one category" if category else ""
        print(
            f"\n== {role}, {days} days{cut}: request {profile.request_ms:.1f} ms, "
            f"SQL {profile.sql_ms:.1f} ms in {len(profile.queries)} queries, "
            f"the rest (Python, templates) {profile.request_ms - profile.sql_ms:.1f} ms"
        )
        slowest = sorted(profile.queries, key=lambda q: -q.median_ms)
        for query in slowest:
            print(f"  {query.median_ms:7.2f} ms  {_short(query.sql)}")
        for query in slowest[: args.explain]:
            print(f"\n  EXPLAIN (ANALYZE, BUFFERS) of the {query.median_ms:.1f} ms query:")
            for line in _explain(query.sql):
                print(f"    {line}")
    print("\nload average: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--explain", type=int, default=0, help="plans of the N slowest queries")
    parser.add_argument("--roles", nargs="+", choices=list(load.ROLES), default=list(load.ROLES))
    parser.add_argument("--days", nargs="+", type=int, default=[30, 365])
    parser.add_argument("--database", default=load.DATABASE)
    return parser.parse_args()


def _profile(client: object, days: int, repeat: int, *, category: int | None) -> Profile:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    query = {"range": days} | ({"category": category} if category else {})
    get = client.get  # type: ignore[attr-defined]
    get(URL, query)  # warm-up
    requests, runs = [], []
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = get(URL, query)
            requests.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.status_code
        runs.append([(q["sql"], float(q["time"]) * 1000) for q in captured.captured_queries])
    per_query = [
        QueryTime(sql=runs[0][n][0], median_ms=statistics.median(run[n][1] for run in runs))
        for n in range(len(runs[0]))
    ]
    sql = statistics.median(sum(ms for _, ms in run) for run in runs)
    return Profile(statistics.median(requests), sql, tuple(per_query))


def _short(sql: str, width: int = 150) -> str:
    text = re.sub(r"\s+", " ", sql)
    return text if len(text) <= width else text[: width - 3] + "..."


def _explain(sql: str) -> Sequence[str]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
        return [row[0] for row in cursor.fetchall()]


if __name__ == "__main__":
    main()
