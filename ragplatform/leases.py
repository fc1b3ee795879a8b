"""Leases on the database's clock: the one way a row says that a process works on it (a turn
being answered, a document being processed) and until when.

A lease is the row's `lease_expires_at`. It is granted and renewed as the database's time plus
the lease's length, renewed only by a statement that also checks that the row is still held,
and it has lapsed once it is earlier than the database's time. No machine's own clock takes
part, so a process whose clock runs minutes ahead or behind neither takes back a live lease
nor keeps a dead one alive. The apps' domain functions (`turn_lease_renew`,
`documents_reclaim`...) say what "held" means for their rows; this module says what a lease is.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from django.db import connection
from django.db.models import DateTimeField, ExpressionWrapper, Model, Q, Value
from django.db.models.expressions import CombinedExpression
from django.db.models.functions import Now

LEASE_FIELD = "lease_expires_at"
# What Django's Now() is on PostgreSQL, for the statements written in SQL: the time the
# statement started (`now()` would be the start of its transaction).
NOW_SQL = "statement_timestamp()"
LAPSED_SQL = f"{LEASE_FIELD} < {NOW_SQL}"


def db_time(*, seconds_from_now: float) -> ExpressionWrapper[CombinedExpression]:
    """The database's time, `seconds_from_now` ahead (behind when negative)."""
    offset = Value(timedelta(seconds=seconds_from_now))
    return ExpressionWrapper(Now() + offset, output_field=DateTimeField())


def lease_expiry(*, seconds: float) -> ExpressionWrapper[CombinedExpression]:
    """When a lease granted or renewed now runs out: for an update of `lease_expires_at`."""
    return db_time(seconds_from_now=seconds)


def lease_lapsed() -> Q:
    """The rows whose lease has run out (a row without a lease has none to lapse)."""
    return Q(**{f"{LEASE_FIELD}__lt": Now()})


def lease_renew(
    model: type[Model],
    *,
    pk: int,
    seconds: float,
    held: str,
    params: Mapping[str, Any],
    returning: str = "TRUE",
    skip_locked: bool = False,
) -> tuple[Any, ...] | None:
    """Push the lease of row `pk` to `seconds` from now, only while `held` is true of the row.

    `held` and `returning` are SQL over the row's columns with `%(name)s` placeholders filled
    from `params`. Returns the `returning` values of the renewed row, or None when the row was
    not held (ended, taken back, or by someone else). `skip_locked` renews nothing rather than
    wait for a row lock held elsewhere; the caller's next renewal comes before the lease ends.
    """
    table, pk_column = model._meta.db_table, model._meta.pk.column
    where = f"{pk_column} = %(pk)s AND ({held})"
    if skip_locked:
        locked = f"SELECT {pk_column} FROM {table} WHERE {where} FOR UPDATE SKIP LOCKED"  # noqa: S608
        where = f"{pk_column} IN ({locked})"
    # The table is our own model's, the SQL the caller's own text; the values are parameters.
    lease = f"{LEASE_FIELD} = {NOW_SQL} + make_interval(secs => %(lease_s)s)"
    sql = f"UPDATE {table} SET {lease} WHERE {where} RETURNING {returning}"  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(sql, {**params, "pk": pk, "lease_s": seconds})
        row = cursor.fetchone()
    return None if row is None else tuple(row)
