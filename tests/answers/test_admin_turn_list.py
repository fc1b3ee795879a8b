"""The turn list's new columns and filters, its CSV, and the audit page's additions (refusal
reason, collapsed chunks, highlighted cited sentence, follow-up rewrite, tokens, feedback,
categories by turn)."""

from __future__ import annotations

import csv
import datetime as dt
import io

import pytest
from django.test import Client
from django.urls import reverse

from apps.analytics.models import TurnCategory
from apps.answers.admin.audit import rewritten_query, slowest_stage, snippet_marked
from apps.answers.models import FeedbackReason, Turn, TurnFeedback
from tests.factories import (
    CategoryFactory,
    ChunkFactory,
    CitationFactory,
    ConversationFactory,
    TurnFactory,
)

TIMINGS = {
    "spans": {"classification": [0.0, 30.0]},
    "compose_ms": 900.0,
    "retrieval": {"dense": 40.0, "rerank": 1200.0},
    "total_ms": 2500.0,
}


# --- Pure pieces -----------------------------------------------------------------------------


def test_slowest_stage_looks_inside_nested_stages_and_skips_spans_and_totals() -> None:
    assert slowest_stage(TIMINGS) == ("retrieval.rerank", 1200.0)
    assert slowest_stage({"total_ms": 5.0, "spans": {"x": [0, 9000]}}) is None


def test_the_cited_sentence_is_marked_inside_the_chunk() -> None:
    chunk = "Leave is planned early. Employees take twenty-six days of annual leave. Ask HR."
    marked = snippet_marked(chunk, "You get twenty-six days of annual leave")

    assert '<mark class="cited">Employees take twenty-six days of annual leave.</mark>' in marked
    assert str(snippet_marked(chunk, "Nothing in common here")) == chunk.replace("'", "&#x27;")
    assert "<mark" not in snippet_marked("<b>x</b>", "y") and "&lt;b&gt;" in snippet_marked(
        "<b>x</b>", "y"
    )


def test_the_rewrite_is_read_from_the_trace_variants() -> None:
    trace = {
        "variants": [
            {"kind": "original", "text": "and abroad?"},
            {"kind": "rewrite", "text": "work from abroad"},
        ]
    }
    assert rewritten_query(trace) == "work from abroad"
    assert rewritten_query({"variants": [{"kind": "original", "text": "x"}]}) == ""


# --- The list --------------------------------------------------------------------------------


@pytest.mark.django_db
def test_turn_list_shows_latency_slowest_stage_categories_feedback_and_refusal(
    admin_client: Client,
) -> None:
    turn = TurnFactory.create(
        timings_ms=TIMINGS, refused=True, refusal_reason="Nothing in the documents about it"
    )
    TurnCategory.objects.create(
        turn=turn, category=CategoryFactory.create(name="Remote work"), score=0.8, assigned_by="t"
    )
    TurnFeedback.objects.create(turn=turn, rating="down", reason=FeedbackReason.WRONG_SOURCE)

    page = admin_client.get(reverse("admin:answers_turn_changelist")).content.decode()

    assert 'title="slowest: retrieval.rerank 1.20 s">2.50 s' in page
    assert "Remote work" in page and "Not helpful (Wrong source)" in page
    assert "Nothing in the documents about it" in page


@pytest.mark.django_db
def test_latency_and_feedback_filters(admin_client: Client) -> None:
    slow = TurnFactory.create(timings_ms={"total_ms": 8000.0}, question="slow one")
    TurnFactory.create(timings_ms={"total_ms": 900.0}, question="fast one")
    TurnFactory.create(timings_ms={}, question="still streaming")
    TurnFeedback.objects.create(turn=slow, rating="up")
    url = reverse("admin:answers_turn_changelist")

    def shown(**params: str) -> set[str]:
        response = admin_client.get(url, params)
        assert response.status_code == 200
        return {t.question for t in response.context["cl"].result_list}

    assert shown(latency_above_ms="5000") == {"slow one"}
    assert shown(latency_above_ms="1234") == {"slow one"}  # any value a link carries
    assert shown(feedback="up") == {"slow one"}
    assert shown(feedback="none") == {"fast one", "still streaming"}
    assert shown(feedback="down") == set()


@pytest.mark.django_db
def test_day_collection_group_document_and_question_filters(admin_client: Client) -> None:
    from django.contrib.auth.models import Group, User

    group = Group.objects.create(name="staff")
    member = User.objects.create_user("member")
    member.groups.add(group)
    inside = TurnFactory.create(
        conversation=ConversationFactory.create(user=member), readable_collections=[7]
    )
    everywhere = TurnFactory.create(readable_collections=None)
    TurnFactory.create(readable_collections=[8])
    chunk = ChunkFactory.create()
    CitationFactory.create(turn=inside, chunk=chunk)
    Turn.objects.filter(pk=everywhere.pk).update(
        created_at=dt.datetime(2026, 1, 5, 12, tzinfo=dt.UTC)
    )
    url = reverse("admin:answers_turn_changelist")

    def shown(**params: str | int) -> set[int]:
        response = admin_client.get(url, params)
        assert response.status_code == 200
        return {t.pk for t in response.context["cl"].result_list}

    assert shown(collection=7) == {inside.pk, everywhere.pk}  # null: every collection
    assert shown(group=group.pk) == {inside.pk}
    assert shown(cited_document=chunk.document_id) == {inside.pk}
    assert shown(question=inside.question) == {inside.pk}
    assert shown(day_from="2026-01-05", day_to="2026-01-05") == {everywhere.pk}


@pytest.mark.django_db
@pytest.mark.parametrize(
    "params", [{"day_from": "soon"}, {"collection": "x"}, {"latency_above_ms": "fast"}]
)
def test_bad_filter_values_redirect_with_an_error_instead_of_failing(
    admin_client: Client, params: dict[str, str]
) -> None:
    response = admin_client.get(reverse("admin:answers_turn_changelist"), params)

    assert response.status_code == 302 and response["Location"].endswith("?e=1")


@pytest.mark.django_db
def test_csv_has_latency_slowest_stage_categories_and_feedback(admin_client: Client) -> None:
    turn = TurnFactory.create(timings_ms=TIMINGS, refused=True, refusal_reason="Not covered")
    for name, score in (("HR", 0.4), ("Remote work", 0.9)):
        TurnCategory.objects.create(
            turn=turn, category=CategoryFactory.create(name=name), score=score, assigned_by="t"
        )
    TurnFeedback.objects.create(turn=turn, rating="down", reason="incomplete", comment="=1+1")

    response = admin_client.get(reverse("admin:answers_turn_export"), {"feedback": "down"})
    body = b"".join(response.streaming_content)  # type: ignore[attr-defined]
    rows = list(csv.DictReader(io.StringIO(body.decode())))

    assert len(rows) == 1
    row = rows[0]
    assert (row["total_ms"], row["slowest_stage"]) == ("2500.0", "retrieval.rerank 1200.0 ms")
    assert row["categories"] == "Remote work; HR"  # highest score first
    assert (row["feedback"], row["feedback_reason"], row["refusal_reason"]) == (
        "down", "incomplete", "Not covered",
    )  # fmt: skip
    assert row["feedback_comment"] == "'=1+1"  # never a formula


# --- The audit page --------------------------------------------------------------------------


def _candidates(chunks: list[int]) -> list[dict[str, object]]:
    return [
        {"chunk_id": cid, "dense_rank": n, "dense_score": 0.5} for n, cid in enumerate(chunks, 1)
    ]


@pytest.mark.django_db
def test_audit_shows_reason_rewrite_tokens_feedback_and_collapses_chunks(
    admin_client: Client,
) -> None:
    chunks = ChunkFactory.create_batch(14)
    conversation = ConversationFactory.create()
    earlier = TurnFactory.create(conversation=conversation, index=1)
    turn = TurnFactory.create(
        conversation=conversation,
        index=2,
        refused=True,
        refusal_reason="The documents do not cover working abroad",
        retrieval_trace={
            "variants": [
                {"kind": "original", "text": "and abroad?"},
                {"kind": "rewrite", "text": "Can I work from abroad?"},
            ],
            "candidates": _candidates([c.pk for c in chunks]),
        },
        prompt_tokens=800,
        completion_tokens=60,
    )
    hr, remote = CategoryFactory.create(name="HR"), CategoryFactory.create(name="Remote work")
    TurnCategory.objects.create(turn=earlier, category=hr, score=0.7, assigned_by="t")
    TurnCategory.objects.create(turn=turn, category=remote, score=0.9, assigned_by="t")
    TurnFeedback.objects.create(
        turn=turn, rating="down", reason="not_in_documents", comment="Ask HR"
    )

    page = admin_client.get(reverse("admin:answers_turn_change", args=[turn.pk])).content.decode()

    reason = page.split('id="refusal-reason"')[1].split("</tr>")[0]
    assert "The documents do not cover working abroad" in reason
    assert "Can I work from abroad?" in page.split('id="rewrite"')[1].split("</tr>")[0]
    assert "total 860" in page.split('id="token-usage"')[1].split("</tr>")[0]
    feedback = page.split('id="audit-feedback"')[1].split("</div>")[0]
    assert "Not helpful" in feedback and "Not in the documents" in feedback and "Ask HR" in feedback
    shown, rest = page.split('id="retrieval"')[1].split('id="retrieval-rest"')
    assert shown.split("<tbody>")[1].split("</tbody>")[0].count("<tr") == 10
    assert "Show all 14 chunks" in rest.split("</summary>")[0]
    assert rest.split("</details>")[0].count("<tr") == 4  # 14 retrieved, 10 shown
    history = page.split('id="category-history"')[1].split("</tr>")[0]
    assert "turn 1: HR" in history and "turn 2 (this one): Remote work" in history


@pytest.mark.django_db
def test_audit_marks_the_cited_sentence_in_the_chunk(admin_client: Client) -> None:
    answer = "You get twenty-six days of leave."
    chunk = ChunkFactory.create(text="Plan early. Employees take twenty-six days of leave. Ask HR.")
    turn = TurnFactory.create(answer=answer)
    CitationFactory.create(turn=turn, chunk=chunk, alias="c1", position=len(answer))

    page = admin_client.get(reverse("admin:answers_turn_change", args=[turn.pk])).content.decode()

    snippet = page.split('id="citation-c1"')[1].split("</tr>")[0]
    assert '<mark class="cited">Employees take twenty-six days of leave.</mark>' in snippet
