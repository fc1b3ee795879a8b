"""The extractive answer keeps the source's shape: lists, steps, rows, paragraphs, comparison rows."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from apps.answers.composing.candidates import Scored, Sentence
from apps.answers.composing.comparison import _spells
from apps.answers.composing.sentences import sentence_candidates
from apps.answers.composing.shaping import on_topic, shaped_pieces
from apps.answers.composing.structure import ITEM, PROSE, ROW, STEP, chunk_lines, never_answers
from apps.answers.composing.terms import content_terms
from apps.answers.retrieval.types import ContextChunk, ContextWindow
from tests.answers.compose import ask, composer, run, text_of
from tests.answers.fakes import retrieved_chunk
from tests.conftest import CountingEmbedder

FORMATS = (
    "The platform can ingest these kinds of documents:\n- PDF files (.pdf)\n"
    "- Word documents (.docx)\n- HTML pages (.html or .htm)\n"
    "A file with any other ending is refused."
)
STATUSES = (
    "Every document has one of four statuses:\n| Status | Meaning |\n|---|---|\n"
    "| pending | The document is stored and waiting for a worker. |\n"
    "| failed | Ingestion stopped; the document shows a message that says why. |"
)
CHECKING = (
    "1. Open the document list in the admin and check that the status is ready.\n"
    "2. If it is failed, read the message.\n"
    "3. Ask a question whose answer is in the document and check that the answer cites it."
)


def window(*chunks: tuple[str, str, str], language: str = "en") -> ContextWindow:
    """Chunks as (heading, text, language); the title is the heading's first part."""
    built = []
    for index, (heading, text, lang) in enumerate(chunks, start=1):
        retrieved = retrieved_chunk(index, text, title=heading.split(" > ")[0], heading=heading)
        retrieved = dataclasses.replace(retrieved, language=lang or language)
        built.append(ContextChunk(alias=f"c{index}", chunk=retrieved, text=text))
    return ContextWindow(tuple(built), budget_tokens=2000, used_tokens=200, dropped_chunk_ids=())


def test_chunk_lines_read_back_items_steps_rows_and_skip_headers() -> None:
    lines = chunk_lines(f"{STATUSES}\n{CHECKING}\n- an item")

    assert [line.kind for line in lines] == [PROSE, ROW, ROW, STEP, STEP, STEP, ITEM]
    assert lines[0].intro
    assert lines[1].text == "pending: The document is stored and waiting for a worker."
    assert lines[1].context == "Status, Meaning"


async def test_a_list_in_the_source_stays_a_list_each_item_cited() -> None:
    context = window(("Ingesting > Supported file types", FORMATS, ""))

    events = await run(
        composer(), ask("Which kinds of documents can the platform ingest?", context)
    )

    lines = text_of(events).splitlines()
    assert "- PDF files (.pdf) [c1]" in lines
    assert "- Word documents (.docx) [c1]" in lines
    assert "- HTML pages (.html or .htm) [c1]" in lines
    assert not any("PDF files" in line and "Word" in line for line in lines)


async def test_table_rows_are_quoted_under_their_header() -> None:
    context = window(("Ingesting > Document statuses", STATUSES, ""))

    events = await run(composer(), ask("What does the failed status mean?", context))

    text = text_of(events)
    assert "| Status | Meaning |\n|---|---|\n" in text
    assert (
        "| failed | Ingestion stopped; the document shows a message that says why. [c1] |" in text
    )


async def test_a_row_below_its_header_s_chunk_stays_an_item() -> None:
    rows = STATUSES.split("|---|---|\n")[1]  # a chunk that starts inside the table
    context = window(("Ingesting > Document statuses", rows, ""))

    events = await run(
        composer(min_evidence=0.05), ask("What does the failed status mean?", context)
    )

    text = text_of(events)
    assert "|" not in text
    assert "- failed: Ingestion stopped; the document shows a message that says why [c1]." in text


async def test_numbered_steps_of_the_source_stay_numbered_steps() -> None:
    context = window(("Ingesting > Checking that ingestion worked", CHECKING, ""))

    events = await run(
        composer(), ask("How do I check that ingestion worked?", context, intent="procedural")
    )

    assert text_of(events).splitlines() == [
        "1. Open the document list in the admin and check that the status is ready [c1].",
        "2. If it is failed, read the message [c1].",
        "3. Ask a question whose answer is in the document and check that the answer cites it "
        "[c1].",
    ]


async def test_a_procedure_in_the_users_language_comes_first() -> None:
    persian = "1. وارد پنل مدیریت شوید.\n2. فایل‌ها را انتخاب کنید.\n3. فرم را بفرستید."
    english = "1. Open the admin.\n2. Select the files to upload.\n3. Submit the upload form."
    context = window(("Upload > Steps", english, "en"), ("بارگذاری > گام‌ها", persian, "fa"))

    events = await run(
        composer(min_evidence=0.0),
        ask("چگونه فایل‌ها را بارگذاری کنم؟", context, intent="procedural", language="fa"),
    )

    lines = text_of(events).splitlines()
    assert lines[0].startswith("1. وارد پنل مدیریت شوید")
    assert all("[c2]" in line for line in lines)


@pytest.mark.parametrize(
    "sentence",
    [
        'The ask command asks from a terminal: python manage.py ask "How do I upload files?"',
        "Where do I find the admin?",
        "See 12-troubleshooting for what to do in each case.",
        "Document search: 05-search.",
        "This section describes uploads.",
        "# Uploads",
    ],
)
def test_sentences_that_never_answer(sentence: str) -> None:
    assert never_answers(sentence)


def test_sentences_that_answer_are_kept() -> None:
    assert not never_answers("Select several files in the upload form and submit them together.")
    assert not never_answers("RAG_CHUNK_MAX_WORDS: The longest chunk, in words. Default 140.")


async def test_quoted_questions_pointers_and_markup_stay_out_of_the_answer() -> None:
    text = (
        "The upload form accepts several files at once: select them and submit them together. "
        'The ask command asks from a terminal: python manage.py ask "How do I upload several '
        'files at once?" The **upload form** lists `refused` files | with reasons. '
        "See 07-ingesting-documents."
    )
    context = window(("Ingesting > Uploading several files", text, ""))

    events = await run(composer(), ask("How do I upload several files at once?", context))

    answer = text_of(events)
    assert "select them and submit them together [c1]." in answer
    assert "manage.py ask" not in answer and "See 07" not in answer
    for mark in ("**", "`", "|"):
        assert mark not in answer


def test_a_label_sentence_is_joined_to_the_one_after_it() -> None:
    text = "SSE (Server-Sent Events). A way of streaming events over HTTP. It is one-way."
    found = sentence_candidates(window(("Glossary", text, "")))

    assert [s.text for s in found] == [
        "SSE (Server-Sent Events): A way of streaming events over HTTP.",
        "It is one-way.",
    ]


def scored(text: str, alias: str, rank: int, position: int, score: float, heading: str) -> Scored:
    sentence = Sentence(
        text,
        alias,
        rank,
        position,
        content_terms(text),
        False,
        line=position,
        heading_terms=content_terms(heading),
    )
    return Scored(sentence, 0.5, 0.5, score, None)


def test_chosen_sentences_become_paragraphs_grouped_by_source() -> None:
    units = [
        scored("Uploads are stored first.", "c1", 0, 0, 0.9, "Uploads"),
        scored("Parsing runs later.", "c1", 0, 1, 0.8, "Uploads"),
        scored("Workers take the work.", "c2", 1, 0, 0.7, "Workers"),
    ]

    text = "".join(shaped_pieces(units, max_chars=700))

    assert text == (
        "Uploads are stored first [c1]. Parsing runs later [c1].\n\nWorkers take the work [c2]."
    )


def test_a_sentence_from_an_unrelated_section_is_left_out() -> None:
    best = scored("Uploads are stored before parsing.", "c1", 0, 0, 0.9, "Uploading documents")
    related = scored("Each file becomes a document.", "c2", 1, 0, 0.6, "Uploading in the admin")
    unrelated = scored("Dashboards show counts.", "c3", 2, 0, 0.6, "Analytics dashboards")

    kept = on_topic([best, related, unrelated], content_terms("How are uploads stored?"))

    assert kept == [best, related]


WEBSOCKET = "The chat page uses a WebSocket at /ws/chat/. It closes anonymous connections."
SSE = (
    "The response is a Server-Sent Events stream that carries the same events as the WebSocket. "
    "A refused request gets the same error code that the WebSocket would send."
)
DEPLOY = "Every answer streams from the process that holds its WebSocket or SSE connection."
EVENT = "One typed message in the stream of an answer: token, citation or finished."


async def test_comparison_rows_hold_only_evidence_about_their_side() -> None:
    context = window(
        ("Asking > WebSocket", WEBSOCKET, ""),
        ("Asking > Server-Sent Events", SSE, ""),
        ("Deploying > Processes", DEPLOY, ""),
        ("Glossary > Event", EVENT, ""),
    )
    query = "Compare the WebSocket and SSE streams"

    events = await run(composer(min_evidence=0.0), ask(query, context, intent="comparison"))

    rows = text_of(events).splitlines()
    websocket = next(r for r in rows if r.startswith("| **WebSocket** |"))
    sse = next(r for r in rows if r.startswith("| **SSE streams** |"))
    assert "[c1]" in websocket and "[c2]" not in websocket and "[c3]" not in websocket
    assert "[c2]" in sse and "[c4]" not in sse and "[c3]" not in sse


async def test_a_side_without_evidence_says_so() -> None:
    context = window(("Asking > WebSocket", WEBSOCKET, ""))

    events = await run(
        composer(min_evidence=0.0),
        ask("Compare the WebSocket and the REST API", context, intent="comparison"),
    )

    # Not a half-empty table: the side that has evidence in prose, then which side has none.
    text = text_of(events)
    assert "|" not in text
    assert "The chat page uses a WebSocket at /ws/chat/ [c1]." in text
    assert text.endswith("The documents do not describe REST API.")


async def test_a_side_named_only_beside_the_other_is_not_called_undescribed() -> None:
    both = (
        "Repositories",
        "Mirrors serve two kinds of repositories: dists-style repositories keep files in a "
        "tree, flat repositories keep them in one directory. Flat repositories are legacy.",
        "",
    )

    events = await run(
        composer(min_evidence=0.0),
        ask("dists-style vs flat repositories?", window(both), intent="comparison"),
    )

    text = text_of(events)
    assert "dists-style repositories keep files in a tree" in text
    assert "do not describe" not in text


def test_an_acronym_matches_its_spelled_out_form() -> None:
    assert _spells("sse", "A Server-Sent Events stream")
    assert not _spells("sse", "some sentences explain")


def test_item_fragments_are_matched_with_their_section_and_intros_with_their_items() -> None:
    found = sentence_candidates(window(("Ingesting > Supported file types", FORMATS, "")))

    pdf = next(s for s in found if s.text == "PDF files (.pdf)")
    intro = next(s for s in found if s.intro)
    assert pdf.kind == ITEM
    assert content_terms("Supported file types") <= pdf.terms
    assert "Supported file types" in pdf.extent
    assert content_terms("PDF Word HTML") <= intro.terms


class RecordingEmbedder(CountingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.passages: list[str] = []

    def embed_passages(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.passages += texts
        return super().embed_passages(texts)


async def test_the_extent_is_what_gets_embedded() -> None:
    embedder = RecordingEmbedder()
    context = window(("Ingesting > Supported file types", FORMATS, ""))

    await run(composer(embedder), ask("Which file types are supported?", context))

    assert any("Supported file types" in text for text in embedder.passages)
