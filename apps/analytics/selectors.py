"""Small reads for analytics: periods and the router's latest evaluation. The dashboard's
reads are in `dashboard/selectors.py` (pre-aggregated counts) and `dashboard/question_lists.py`
(the two bounded reads of the turn log).

Days are local to settings.TIME_ZONE, not to the request, because the stored rows were cut
with it (`apps.answers.turn.cuts`).
"""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from apps.answers.models import RouterEvaluation
from apps.answers.turn.cuts import local_day


def local_period(*, days: int, now: dt.datetime | None = None) -> tuple[dt.date, dt.date]:
    """First and last day of the `days` local days ending today, both included."""
    today = local_day(now or timezone.now())
    return today - dt.timedelta(days=days - 1), today


def router_evaluation_latest() -> RouterEvaluation | None:
    return RouterEvaluation.objects.order_by("-created_at").first()
