"""Admin building blocks every app may use: read-only admins and cheap changelists.

On log-sized tables a changelist keeps a fixed query budget: counts come from correlated
subqueries evaluated for the shown page only, and an unfiltered total is estimated from the
planner's statistics instead of counted.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.core.paginator import Paginator
from django.db import connections, models
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from django.utils.functional import cached_property


class EstimatedCountPaginator(Paginator):
    """Unfiltered, a big table is counted from the planner's statistics instead of a full scan."""

    exact_below = 10_000  # small tables (and fresh ones, never analysed) are counted exactly

    @cached_property
    def count(self) -> int:
        queryset = self.object_list
        if isinstance(queryset, QuerySet) and not queryset.query.where:
            estimate = _estimated_rows(queryset)
            if estimate >= self.exact_below:
                return estimate
        return super().count


def _estimated_rows(queryset: QuerySet[Any]) -> int:
    with connections[queryset.db].cursor() as cursor:
        cursor.execute(
            "SELECT reltuples::bigint FROM pg_class WHERE oid = to_regclass(%s)",
            [queryset.model._meta.db_table],
        )
        row = cursor.fetchone()
    return max(int(row[0]), 0) if row else 0  # -1 until the table is first analysed


def related_count(model: type[models.Model], field: str) -> Coalesce:
    """COUNT of `model` rows pointing at the outer row, run only for the rows of the page.

    A JOIN + GROUP BY would aggregate the whole log before LIMIT; this subquery does not.
    """
    rows = (
        model._default_manager.filter(**{field: OuterRef("pk")})
        .order_by()
        .values(field)
        .annotate(n=Count("*"))
        .values("n")
    )
    return Coalesce(Subquery(rows, output_field=IntegerField()), Value(0))


class ReadOnlyAdmin(admin.ModelAdmin[Any]):
    """Rows written only by the application (audit logs, derived data): view, never edit."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
