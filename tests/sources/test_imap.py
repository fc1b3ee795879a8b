"""An IMAP mailbox against a real Dovecot: messages and their attachments become documents,
only new UIDs are fetched, deleted messages leave search, wrong credentials keep everything."""

from __future__ import annotations

from typing import Any

import pytest

from apps.corpus.models import Chunk, Document, DocumentStatus
from apps.sources.models import Source, SourceItem, SyncStatus
from apps.sources.sync.run import source_sync
from tests.conftest import CountingEmbedder
from tests.sources import servers
from tests.sources.conftest import mail_place
from tests.sources.places import MailPlace
from tests.sources.syncing import FetchSpy, credentials_replace, hits, killed_then_resumed, synced

pytestmark = pytest.mark.django_db


@pytest.fixture
def mailbox(dovecot: servers.Running) -> MailPlace:
    return mail_place(dovecot)


def test_messages_and_attachments_become_documents(
    mailbox: MailPlace, source_of: Any, embedder: CountingEmbedder
) -> None:
    mailbox.put(
        "offer",
        "Aardvarks dig burrows at night.",
        attachments={"terms.md": b"# Terms\n\nBeavers build dams."},
    )
    mailbox.put("reply", "Albatrosses glide for days.")
    source = source_of(mailbox)

    report = synced(source)

    assert (report.status, report.added, report.failed, report.error) == ("ok", 3, 0, "")
    documents = Document.objects.filter(collection=source.collection)
    assert set(documents.values_list("status", flat=True)) == {DocumentStatus.READY}
    message = documents.get(source_item__key=f"{mailbox.folder}/{mailbox.uids['offer']}.eml")
    assert message.title == "About offer"
    text = " ".join(Chunk.objects.filter(document=message).values_list("text", flat=True))
    assert "Bob Stone" in text and "2026" in text and "Beavers" not in text
    assert hits(source, "aardvarks") == 1 and hits(source, "beavers") == 1
    item = SourceItem.objects.get(document=message)
    assert item.location.startswith(f"{mailbox.location};UIDVALIDITY=")
    assert item.extra["message_id"] == "<offer@t>" and item.extra["attachments"] == ["terms.md"]


def test_only_new_messages_are_fetched_and_deleted_ones_leave_search(
    mailbox: MailPlace, source_of: Any, embedder: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    mailbox.put("offer", "Aardvarks dig burrows.", attachments={"terms.md": b"Beavers build dams."})
    mailbox.put("reply", "Albatrosses glide for days.")
    source = source_of(mailbox)
    synced(source)
    embedded = embedder.passages_embedded

    mailbox.put("late", "Capybaras bathe in rivers.")
    spy = FetchSpy(monkeypatch)
    second = synced(source)
    mailbox.remove("offer")
    third = synced(source)

    assert (second.added, second.unchanged, second.updated) == (1, 3, 0)
    assert spy.reads == 1  # the new message only: nothing stored was read again
    assert embedder.passages_embedded > embedded
    assert (third.deleted, third.unchanged) == (2, 2)  # the message and its attachment
    assert hits(source, "aardvarks") == 0 and hits(source, "beavers") == 0
    assert hits(source, "capybaras") == 1
    assert Document.objects.filter(collection=source.collection).count() == 2


def test_a_large_mailbox_is_fetched_in_batches(
    mailbox: MailPlace, source_of: Any, embedder: CountingEmbedder, settings: Any
) -> None:
    settings.RAG_SOURCE_IMAP_BATCH = 2
    for n in range(5):
        mailbox.put(f"note{n}", f"Entry number {n} tells of item{n}.")
    source = source_of(mailbox)

    report = synced(source)

    assert (report.added, report.failed) == (5, 0)
    assert all(hits(source, f"item{n}") == 1 for n in range(5))


def test_wrong_credentials_fail_the_sync_and_keep_the_messages(
    mailbox: MailPlace, source_of: Any, embedder: CountingEmbedder
) -> None:
    mailbox.put("offer", "Aardvarks dig burrows at night.")
    source = source_of(mailbox)
    synced(source)
    credentials_replace(source, username=mailbox.credentials["username"], password="not-it")

    report = source_sync(source_id=source.pk, wait=True)

    source.refresh_from_db()
    assert report.status == "failed" and "refused the credentials" in report.error
    assert source.status == SyncStatus.FAILED and source.last_error == report.error
    assert hits(source, "aardvarks") == 1


def test_a_missing_folder_or_server_is_a_clear_error(
    mailbox: MailPlace, source_of: Any, dovecot: servers.Running
) -> None:
    source = source_of(mailbox)  # its folder was never created
    report = source_sync(source_id=source.pk)
    assert report.status == "failed" and "cannot be opened" in report.error

    Source.objects.filter(pk=source.pk).update(location="imap://127.0.0.1:9/INBOX")
    report = source_sync(source_id=source.pk)
    assert report.status == "failed" and "cannot be reached" in report.error


def test_a_killed_sync_of_a_mailbox_resumes_without_duplicates(
    mailbox: MailPlace, source_of: Any, embedder: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    killed_then_resumed(mailbox, source_of, monkeypatch)


def test_a_renumbered_folder_is_read_again_without_embedding_again(
    mailbox: MailPlace, source_of: Any, embedder: CountingEmbedder
) -> None:
    mailbox.put("offer", "Aardvarks dig burrows at night.")
    mailbox.put("reply", "Albatrosses glide for days.")
    source = source_of(mailbox)
    synced(source)
    embedded = embedder.passages_embedded
    with mailbox.box() as box:  # a new folder of the same name: a new UIDVALIDITY
        box.folder.delete(mailbox.folder)
    mailbox.put("offer", "Aardvarks dig burrows at night.")
    mailbox.put("reply", "Albatrosses glide for days.")

    report = synced(source)

    assert (report.status, report.unchanged, report.added, report.deleted) == ("ok", 2, 0, 0)
    assert embedder.passages_embedded == embedded
    assert hits(source, "aardvarks") == 1


def test_a_message_over_the_limit_fails_alone(
    mailbox: MailPlace, source_of: Any, embedder: CountingEmbedder
) -> None:
    mailbox.put("small", "Aardvarks dig burrows.")
    mailbox.put("big", "Beavers build dams. " * 200, attachments={"a.zip": b"PK\x03\x04"})
    source = source_of(mailbox, max_file_bytes=2_000)

    report = synced(source)

    assert (report.status, report.added, report.failed) == ("ok", 1, 1)
    error = SourceItem.objects.get(source=source, document__isnull=True).error
    assert "bytes; the limit is 2,000 bytes" in error
    assert hits(source, "aardvarks") == 1


def test_a_damaged_message_fails_alone(
    mailbox: MailPlace, source_of: Any, embedder: CountingEmbedder
) -> None:
    mailbox.put("good", "Aardvarks dig burrows.")
    damaged = b"From: a@example.org\r\nSubject: x\r\nContent-Type: text/plain; charset=x-nope\r\n"
    with mailbox.box() as box:
        box.append(damaged + b"\r\nhello\r\n", mailbox.folder)
    source = source_of(mailbox)

    report = synced(source)

    assert (report.status, report.added, report.failed) == ("ok", 1, 1)
    error = SourceItem.objects.get(source=source, document__isnull=True).error
    assert "could not be read (LookupError)" in error


def test_a_tls_error_is_a_clear_error_and_keeps_the_messages(
    mailbox: MailPlace, source_of: Any, embedder: CountingEmbedder
) -> None:
    mailbox.put("offer", "Aardvarks dig burrows at night.")
    source = source_of(mailbox)
    synced(source)
    # imaps:// to a port that speaks plain IMAP: the TLS handshake fails.
    tls = mailbox.location.replace("imap://", "imaps://")
    Source.objects.filter(pk=source.pk).update(location=tls)

    report = source_sync(source_id=source.pk, wait=True)

    assert report.status == "failed" and "cannot be reached" in report.error
    assert "SSL" in report.error and hits(source, "aardvarks") == 1


def test_a_new_message_over_the_limit_alone_is_never_downloaded(
    mailbox: MailPlace, source_of: Any, embedder: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    mailbox.put("small", "Aardvarks dig burrows.")
    source = source_of(mailbox, max_file_bytes=2_000)
    synced(source)
    mailbox.put("big", "Beavers build dams. " * 200)
    spy = FetchSpy(monkeypatch)

    report = synced(source)

    assert (report.status, report.added, report.failed, report.unchanged) == ("ok", 0, 1, 1)
    assert spy.reads == 0 and hits(source, "aardvarks") == 1
