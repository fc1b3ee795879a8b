"""Task workers in the admin: which are running, where, since when, and on what (read-only;
each worker writes its own row, see `workers.py`); no page for API tokens."""

from __future__ import annotations

from django.contrib import admin
from django.utils.timesince import timesince
from rest_framework.authtoken.models import TokenProxy

from ragplatform.admin_base import ReadOnlyAdmin
from ragplatform.models import WorkerHeartbeat
from ragplatform.workers import worker_alive

# DRF's token page would show hashes and store a hand-typed key as given, which then signs no
# one in (keys are hashed): tokens are issued by `manage.py api_token` only.
if admin.site.is_registered(TokenProxy):
    admin.site.unregister(TokenProxy)


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(ReadOnlyAdmin):
    list_display = ["host", "pid", "alive", "last_seen", "current_task", "started_at"]
    ordering = ["-last_seen_at"]
    fields = readonly_fields = (
        "worker_id",
        "host",
        "pid",
        "started_at",
        "last_seen_at",
        "current_task",
    )

    @admin.display(description="alive", boolean=True)
    def alive(self, heartbeat: WorkerHeartbeat) -> bool:
        return worker_alive(last_seen=heartbeat.last_seen_at)

    @admin.display(description="last seen", ordering="last_seen_at")
    def last_seen(self, heartbeat: WorkerHeartbeat) -> str:
        return f"{timesince(heartbeat.last_seen_at)} ago"
