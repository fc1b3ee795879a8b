"""`source_add`, `source_sync --wait --json`, `source_list --json`, and the periodic job that
queues due sources and resumes syncs whose worker died."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from apps.corpus.models import Collection
from apps.sources.credentials import credentials_decrypt
from apps.sources.models import Source, SourceKind, SyncStatus
from apps.sources.sync.schedule import sources_due_enqueue
from apps.sources.sync.services import source_create
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db


def _call(*args: str) -> list[dict[str, Any]]:
    out = StringIO()
    call_command(*args, stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines() if line.startswith("{")]


def test_add_sync_and_list_at_the_command_line(
    tmp_path: Path, embedder: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.md").write_text("Aardvarks dig burrows.")
    (tmp_path / "skip.tmp.md").write_text("Skipped.")
    monkeypatch.setenv("DAV_CREDENTIALS", '{"username": "u", "password": "p"}')

    _call(
        "source_add",
        "folder",
        str(tmp_path),
        "--collection",
        "Docs",
        "--name",
        "docs",
        "--every",
        "60",
        "--exclude",
        "*.tmp.md",
        "--credentials-env",
        "DAV_CREDENTIALS",
    )
    (report,) = _call("source_sync", "docs", "--wait", "--json")
    (listed,) = _call("source_list", "--json")

    assert {k: report[k] for k in ("added", "updated", "unchanged", "deleted", "failed")} == {
        "added": 1,
        "updated": 0,
        "unchanged": 0,
        "deleted": 0,
        "failed": 0,
    }
    assert listed["name"] == "docs" and listed["status"] == "ok" and listed["every_minutes"] == 60
    token = Source.objects.get(name="docs").credentials_encrypted
    assert credentials_decrypt(token=token) == {"username": "u", "password": "p"}


def test_a_sync_of_an_unknown_source_or_a_failing_one_is_a_command_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="No source"):
        call_command("source_sync", "nothing", "--wait")
    _call("source_add", "folder", str(tmp_path / "gone"), "--collection", "Docs", "--name", "g")
    with pytest.raises(CommandError, match="does not exist"):
        call_command("source_sync", "g", "--wait", stdout=StringIO())


def test_the_periodic_job_queues_due_sources_and_resumes_dead_syncs(
    django_capture_on_commit_callbacks: Any,
) -> None:
    collection = Collection.objects.create(name="C")

    def make(name: str, **fields: Any) -> Source:
        source = source_create(
            name=name, kind=SourceKind.FOLDER, location="/x", collection=collection
        )
        Source.objects.filter(pk=source.pk).update(**fields)
        return source

    now = timezone.now()
    make("never", every_minutes=5)
    make("due", every_minutes=5, status=SyncStatus.OK, sync_ended_at=now - timedelta(minutes=6))
    make("recent", every_minutes=5, status=SyncStatus.OK, sync_ended_at=now - timedelta(minutes=1))
    make("manual")
    make("paused", every_minutes=5, paused=True)
    make("dead", status=SyncStatus.RUNNING, lease_expires_at=now - timedelta(seconds=5))
    make("alive", status=SyncStatus.RUNNING, lease_expires_at=now + timedelta(minutes=5))

    with django_capture_on_commit_callbacks(execute=True):
        queued = sources_due_enqueue()
    again = sources_due_enqueue()  # another worker a moment later: nothing more

    names = set(Source.objects.filter(status=SyncStatus.QUEUED).values_list("name", flat=True))
    assert queued == 3 and again == 0
    assert names == {"never", "due", "dead"}
    assert DBTaskResult.objects.filter(task_path__endswith="source_sync_task").count() == 3
