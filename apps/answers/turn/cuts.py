"""How the turn log is cut for counting: local days, a collection the turn could read, a group
of its asker.

The dashboard's pre-aggregated counts (analytics) and the turn list's filters use these same
rules, so a figure and the list behind it hold the same turns. Days are those of
settings.TIME_ZONE whatever zone a request has active.
"""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.models import Group
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone


def local_day(moment: dt.datetime) -> dt.date:
    """The counting day of a moment (settings.TIME_ZONE, whatever zone is active)."""
    return timezone.localdate(moment, timezone=timezone.get_default_timezone())


def local_day_start(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time.min, tzinfo=timezone.get_default_timezone())


def local_days_q(first: dt.date, last: dt.date) -> Q:
    """Turns that started on the local days `first` to `last`, both included."""
    end = local_day_start(last + dt.timedelta(days=1))
    return Q(created_at__gte=local_day_start(first), created_at__lt=end)


def readable_collection_q(collection_id: int) -> Q:
    """Turns that could read the collection; null means every collection, this one included."""
    return Q(readable_collections__contains=[collection_id]) | Q(readable_collections__isnull=True)


def asker_group_q(group_id: int) -> Q:
    """Turns whose asker is in the group now (membership is not kept over time)."""
    members = Group.user_set.through.objects.filter(
        group_id=group_id, user_id=OuterRef("conversation__user_id")
    )
    return Q(Exists(members))
