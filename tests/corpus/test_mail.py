"""E-mail and mailboxes: subject as title, sender and date kept, attachments as documents."""

from __future__ import annotations

import pytest

from apps.corpus.ingestion.services import collection_get_or_create
from apps.corpus.models import Document, DocumentStatus
from apps.corpus.parsing import CorruptDocument, parse_document
from apps.corpus.parsing import docx as docx_module
from apps.corpus.uploads.batches import IncomingFile, files_ingest
from tests.answers.fakes import providers_fake, turn_collected
from tests.conftest import CountingEmbedder
from tests.corpus import files
from tests.corpus.mail_files import broken_message, eml_bytes, mbox_bytes, zip_bomb

OFFER = "The laptop allowance for new staff is 1500 euros, paid in the first month."
TRIP = "The team trip to Tabriz leaves on the fourth of December at eight."


def test_a_message_keeps_subject_sender_date_and_text() -> None:
    parsed = parse_document(filename="offer.eml", data=eml_bytes("Laptop allowance", OFFER))
    assert parsed.title == "Laptop allowance"
    lead, body = parsed.blocks[0].text, [b.text for b in parsed.blocks[1:]]
    assert "Sara Ahmadi <sara@example.org>" in lead and "30 Nov 2026" in lead
    assert body == [OFFER]


def test_the_plain_part_is_read_not_both_alternatives() -> None:
    parsed = parse_document(filename="m.eml", data=eml_bytes("Trip", TRIP, html=True))
    assert [b.text for b in parsed.blocks].count(TRIP) == 1


def test_attachments_are_handed_back_as_files_of_their_own() -> None:
    data = eml_bytes("Handbook", OFFER, attachments=[("handbook.docx", files.handbook_docx())])
    parsed = parse_document(filename="m.eml", data=data)
    assert [a.filename for a in parsed.attachments] == ["handbook.docx"]
    assert all("Annual leave" not in b.text for b in parsed.blocks)


def test_a_file_named_eml_without_headers_is_refused() -> None:
    with pytest.raises(CorruptDocument, match="no e-mail headers"):
        parse_document(filename="x.eml", data=b"just some words\n")


def test_a_mailbox_keeps_every_message_and_records_the_broken_one() -> None:
    box = mbox_bytes(
        [eml_bytes("Laptop allowance", OFFER), broken_message(), eml_bytes("Trip", TRIP)]
    )
    parsed = parse_document(filename="team.mbox", data=box)
    by_page = {b.page: b.heading for b in parsed.blocks}
    assert by_page == {1: "Laptop allowance", 3: "Trip"}
    assert [(p.page, p.reason.split(" (")[0]) for p in parsed.unread_pages] == [
        (2, "the message could not be read")
    ]


@pytest.mark.django_db
def test_an_attachment_becomes_a_document_and_a_question_finds_it(
    embedder: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(docx_module, "MAX_UNCOMPRESSED_BYTES", 1024 * 1024)
    attachments = [
        ("handbook.docx", files.handbook_docx()),
        ("bomb.docx", zip_bomb(name="word/document.xml", inflated_bytes=8 * 1024 * 1024)),
        ("bomb.zip", zip_bomb(name="a.bin", inflated_bytes=8 * 1024 * 1024)),
    ]
    data = eml_bytes("Laptop allowance", OFFER, attachments=attachments)
    collection = collection_get_or_create(name="Mail", public=True)
    files_ingest(
        files=[IncomingFile("offer.eml", "offer.eml", lambda: data)],
        collection=collection,
        wait=True,
    )
    message = Document.objects.get(filename="offer.eml")
    assert message.status == DocumentStatus.READY and message.title == "Laptop allowance"
    handbook = Document.objects.get(filename="offer - handbook.docx")
    assert handbook.status == DocumentStatus.READY
    bomb = Document.objects.get(filename="offer - bomb.docx")
    assert bomb.status == DocumentStatus.FAILED and "too large" in bomb.error_message
    assert [r["reason"].split(":")[0] for r in message.unread_pages] == ["attachment bomb.zip"]

    _, events = turn_collected(providers_fake(embedder), "what is the laptop allowance?")
    cited = [e["data"] for e in events if e["type"] == "citation"]
    assert cited and cited[0]["document"] == message.pk
