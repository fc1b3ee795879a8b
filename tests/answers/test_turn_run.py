"""The turn pipeline's own logic with small fake stages (real PostgreSQL, real retrieval)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import LazySettings

from apps.answers.composing.types import (
    Composer,
    ComposeRequest,
    ComposerError,
    ComposerEvent,
    TextDelta,
)
from apps.answers.events import Envelope
from apps.answers.models import Citation, Conversation, Turn, TurnClient, TurnStatus
from apps.answers.providers.registry import Providers
from apps.answers.retrieval.types import RetrievalRequest
from apps.answers.routing.types import Intent, Strategy
from apps.answers.turn.end_steps import TurnEnd, turn_end_steps_override, turn_end_steps_run
from apps.answers.turn.entry import turn_open
from apps.answers.turn.leases import turn_interrupt
from apps.answers.turn.run import turn_run
from apps.answers.turn.search_results import search_results_data
from apps.answers.turn.selectors import turn_events_since
from apps.answers.turn.services import InvalidQuestion, turn_start
from ragplatform.errors import FailureCode
from tests.answers.fakes import (
    ANSWER_TEXT,
    FixedClassifier,
    ScriptedComposer,
    classification,
    event_types,
    handbook_load,
    providers_fake,
    turn_collected,
)
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db


def test_answer_streams_tokens_and_citations_then_exactly_one_terminal(
    embedder: CountingEmbedder,
) -> None:
    handbook_load(embedder)
    turn, events = turn_collected(providers_fake(embedder), "how many days of annual leave?")

    types = event_types(events)
    assert types[0] == "classification" and types[-1] == "finished"
    assert types.count("finished") + types.count("failed") == 1
    assert {"token", "citation", "confidence", "followups"} <= set(types)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    text = "".join(e["data"]["text"] for e in events if e["type"] == "token")
    assert text == ANSWER_TEXT == turn.answer  # markers stripped from what users see and store
    citation = next(e["data"] for e in events if e["type"] == "citation")
    assert citation["alias"] == "c1" and citation["source_file"] == "leave.md"
    assert {"chunk", "document", "title", "page", "snippet"} <= set(citation)
    assert turn.status == TurnStatus.FINISHED and turn.confidence_band in {"green", "yellow", "red"}
    assert Citation.objects.get(turn=turn).chunk_id == citation["chunk"]
    assert turn.unsupported_sentences == 1  # "Leave requests go to your manager." has no marker
    assert turn_events_since(turn_id=turn.pk, last_seq=0) == events  # every event is stored


def test_classification_overlaps_first_pass_retrieval(embedder: CountingEmbedder) -> None:
    handbook_load(embedder)
    turn, _ = turn_collected(providers_fake(embedder), "how many days of annual leave?")
    spans = turn.timings_ms["spans"]
    retrieval_start, retrieval_end = spans["first_pass_retrieval"]
    classify_start, _ = spans["classification"]
    assert retrieval_start <= classify_start < retrieval_end  # retrieval was already running


def test_enum_values_travel_and_are_stored_as_their_plain_strings(
    embedder: CountingEmbedder,
) -> None:
    """The stages hand enums along; the wire and the columns see exactly the old strings."""
    handbook_load(embedder)
    turn, events = turn_collected(providers_fake(embedder), "how many days of annual leave?")
    wire = [json.loads(json.dumps(e)) for e in events]
    assert wire == events
    data = wire[0]["data"]
    assert (data["intent"], data["tier"], data["strategy"], data["language"]) == (
        "factual_question",
        "T1",
        "simple",
        "en",
    )
    confidence = next(e["data"] for e in wire if e["type"] == "confidence")
    assert confidence["band"] in {"green", "yellow", "red"}
    stored = Turn.objects.values("intent", "tier", "strategy", "language", "confidence_band")
    row = stored.get(pk=turn.pk)
    assert row == {**row, "intent": "factual_question", "tier": "T1", "strategy": "simple"}
    assert row["language"] == "en" and row["confidence_band"] == confidence["band"]
    assert all(type(value) is str for value in row.values())


def test_low_confidence_asks_a_clarifying_question(embedder: CountingEmbedder) -> None:
    handbook_load(embedder)
    unsure = FixedClassifier(result=classification(confidence=0.3))
    turn, events = turn_collected(providers_fake(embedder, classifier=unsure), "leave thing")

    assert event_types(events) == ["classification", "clarification", "finished"]
    assert events[0]["data"]["action"] == "clarify"
    assert turn.answer == events[1]["data"]["question"] and turn.action == "clarify"


def test_middling_confidence_bumps_the_tier_and_answers_with_a_document_list(
    embedder: CountingEmbedder,
) -> None:
    handbook_load(embedder)
    middling = FixedClassifier(result=classification(confidence=0.6))
    _, events = turn_collected(providers_fake(embedder, classifier=middling), "annual leave days")

    assert events[0]["data"]["action"] == "hybrid" and events[0]["data"]["tier"] == "T2"
    assert event_types(events)[1] == "search_results" and event_types(events)[-1] == "finished"


def test_search_intent_returns_ranked_documents_with_highlights(embedder: CountingEmbedder) -> None:
    handbook_load(embedder)
    search = FixedClassifier(result=classification(Intent.SEARCH))
    # A request for documents: the list alone (a question worded as a search is answered too).
    _, events = turn_collected(
        providers_fake(embedder, classifier=search), "find documents about travel expenses"
    )

    assert event_types(events) == ["classification", "search_results", "finished"]
    results = events[1]["data"]["results"]
    assert results[0]["source_file"] == "expenses.md" and results[0]["rank"] == 1
    assert "<mark>" in results[0]["snippet_html"] and results[0]["url"].endswith("/source/")


def test_conversational_intent_replies_without_retrieval(embedder: CountingEmbedder) -> None:
    chat = FixedClassifier(result=classification(Intent.CONVERSATIONAL))
    turn, events = turn_collected(providers_fake(embedder, classifier=chat), "hi there")
    assert event_types(events)[-1] == "finished" and "Hello" in turn.answer
    assert "citation" not in event_types(events)


class FailingComposer:
    name = "broken"

    def __init__(self, *, after: str = "") -> None:
        self.after = after

    async def compose(self, request: ComposeRequest) -> AsyncIterator[ComposerEvent]:
        if self.after:
            yield TextDelta(self.after)
            raise ComposerError(FailureCode.MODEL_INTERRUPTED, "stream cut", retryable=True)
        raise ComposerError(FailureCode.MODEL_UNAVAILABLE, "connection refused", retryable=True)
        yield TextDelta("")  # pragma: no cover - makes this an async generator


def test_failure_before_text_falls_back_and_records_it(embedder: CountingEmbedder) -> None:
    handbook_load(embedder)
    providers = providers_fake(embedder)
    providers = Providers(
        **{
            **providers.__dict__,
            "composer": FailingComposer(),
            "fallback_composer": ScriptedComposer(),
        }
    )
    turn, events = turn_collected(providers, "how many days of annual leave?")

    assert event_types(events)[-1] == "finished"
    assert turn.composer == "scripted" and turn.fallback_reason == "broken: model_unavailable"


def test_failure_mid_answer_ends_with_failed_and_keeps_the_partial_answer(
    embedder: CountingEmbedder,
) -> None:
    handbook_load(embedder)
    providers = providers_fake(embedder)
    broken = FailingComposer(after="Employees take twenty-six days [c1] and")
    providers = Providers(
        **{**providers.__dict__, "composer": broken, "fallback_composer": ScriptedComposer()}
    )
    turn, events = turn_collected(providers, "how many days of annual leave?")

    assert event_types(events)[-1] == "failed"
    assert events[-1]["data"] == {
        "code": "model_interrupted",
        "message": "The model stopped before finishing; the partial answer is kept.",
        "retryable": True,
    }
    assert turn.status == TurnStatus.FAILED and turn.partial and turn.answer.startswith("Employees")


def test_aliases_outside_the_context_are_dropped_and_recorded(embedder: CountingEmbedder) -> None:
    handbook_load(embedder)
    composer = ScriptedComposer(pieces=("Leave is twenty-six days [c1][c9].",))
    turn, events = turn_collected(providers_fake(embedder, composer=composer), "annual leave days?")

    assert [e["data"]["alias"] for e in events if e["type"] == "citation"] == ["c1"]
    assert turn.dropped_citations == ["c9"]


def test_cancelling_stores_a_cancelled_terminal_event(embedder: CountingEmbedder) -> None:
    handbook_load(embedder)
    providers = providers_fake(embedder, composer=ScriptedComposer(delay_s=0.5))
    turn = turn_start(conversation=Conversation.objects.create(), question="annual leave days?")

    async def cancel_mid_answer() -> None:
        task = asyncio.ensure_future(_consume_forever(turn.pk, providers))
        await asyncio.sleep(0.8)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    async_to_sync(cancel_mid_answer)()
    turn.refresh_from_db()
    events = turn_events_since(turn_id=turn.pk)
    assert events[-1]["type"] == "failed" and events[-1]["data"]["code"] == "cancelled"
    assert turn.status == TurnStatus.CANCELLED
    assert sum(e["type"] in {"finished", "failed"} for e in events) == 1


@pytest.mark.django_db(transaction=True)  # a refused statement ends a test transaction
def test_a_turn_interrupted_elsewhere_stops_quietly_with_the_stored_end(
    embedder: CountingEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    """Its process stalled past the lease and another interrupted it: the run ends with that
    stored end, logged as a warning, not as a broken turn."""
    handbook_load(embedder)
    providers = providers_fake(embedder, composer=ScriptedComposer(delay_s=0.2))
    turn = turn_start(conversation=Conversation.objects.create(), question="annual leave days?")

    async def interrupted_after_the_first_token() -> list[Envelope]:
        received: list[Envelope] = []
        async for envelope in turn_run(turn_id=turn.pk, providers=providers):
            received.append(envelope)
            if envelope["type"] == "token" and len(received) < 4:
                await sync_to_async(turn_interrupt)(turn_id=turn.pk, lapsed_only=False)
        return received

    received = async_to_sync(interrupted_after_the_first_token)()
    assert received[-1]["type"] == "failed" and received[-1]["data"]["code"] == "interrupted"
    assert [e for e in turn_events_since(turn_id=turn.pk) if e["type"] == "failed"] == [
        received[-1]
    ]
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
    assert any("ended elsewhere" in r.getMessage() for r in caplog.records)


async def _consume_forever(turn_id: int, providers: Providers) -> None:
    async for _ in turn_run(turn_id=turn_id, providers=providers):
        pass


def test_a_bumped_turn_starts_from_the_first_pass_instead_of_searching_again(
    embedder: CountingEmbedder,
) -> None:
    handbook_load(embedder)
    providers = providers_fake(embedder, classifier=FixedClassifier(classification(confidence=0.6)))
    before = embedder.queries_embedded
    turn, events = turn_collected(providers, "annual leave days")

    assert events[0]["data"]["strategy"] == "moderate"
    assert embedder.queries_embedded - before == 1  # the first pass's embedding only
    assert turn.retrieval_trace["settings"]["original_reused"] is True
    fresh = async_to_sync(providers.retriever.retrieve)(
        RetrievalRequest(query="annual leave days", strategy=Strategy.MODERATE)
    )
    shown = events[1]["data"]["results"]
    assert [r["chunk"] for r in shown] == [
        r["chunk"]
        for r in async_to_sync(search_results_data)(query="x", chunks=fresh.chunks)["results"]
    ]


@pytest.mark.parametrize(
    ("composer", "status"),
    [
        (ScriptedComposer(), TurnStatus.FINISHED),
        (FailingComposer(after="Employees take [c1] and"), TurnStatus.FAILED),
    ],
)
def test_each_turn_end_runs_the_registered_steps_once_with_its_status(
    embedder: CountingEmbedder,
    django_capture_on_commit_callbacks: Callable[..., AbstractContextManager[object]],
    composer: Composer,
    status: TurnStatus,
) -> None:
    handbook_load(embedder)
    ends: list[TurnEnd] = []
    with (
        turn_end_steps_override({"record": ends.append}),
        django_capture_on_commit_callbacks(execute=True),
    ):
        turn, _ = turn_collected(providers_fake(embedder, composer=composer), "annual leave days?")  # type: ignore[arg-type]
    assert ends == [TurnEnd(turn.pk, status)]


def test_a_failing_turn_end_step_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    ends: list[TurnEnd] = []

    def explode(end: TurnEnd) -> None:
        raise RuntimeError("queue down")

    with turn_end_steps_override({"bad": explode, "good": ends.append}):
        turn_end_steps_run(TurnEnd(7, TurnStatus.FINISHED))
    assert ends == [TurnEnd(7, TurnStatus.FINISHED)]
    assert "Turn-end step bad failed for turn 7" in caplog.text


def test_a_follow_up_searches_as_its_standalone_rewrite_in_the_first_pass(
    embedder: CountingEmbedder,
) -> None:
    handbook_load(embedder)
    conversation = Conversation.objects.create()
    earlier = turn_start(conversation=conversation, question="What does the company VPN use?")
    Turn.objects.filter(pk=earlier.pk).update(answer="WireGuard.", status=TurnStatus.FINISHED)

    turn, _ = turn_collected(providers_fake(embedder), "and how do I set it up?", conversation)

    variants = {v["kind"]: v["text"] for v in turn.retrieval_trace["variants"]}
    assert variants["original"] == "and how do I set it up?"
    assert (
        variants["rewrite"].startswith("and how do I set it up?") and "VPN" in variants["rewrite"]
    )
    assert turn.retrieval_trace["settings"]["rewrite_method"] == "rules"
    # The answer route took the first pass as it was: the rewrite's best chunk is cited.
    cited = Citation.objects.select_related("chunk__document").get(turn=turn, alias="c1")
    assert cited.chunk is not None and cited.chunk.document.filename == "vpn.md"
    assert "rewrite" in turn.timings_ms["spans"]


def test_a_first_question_is_searched_as_asked(embedder: CountingEmbedder) -> None:
    handbook_load(embedder)
    turn, _ = turn_collected(providers_fake(embedder), "how many days of annual leave?")
    assert [v["kind"] for v in turn.retrieval_trace["variants"]] == ["original"]


def test_a_question_names_at_most_the_configured_number_of_collections(
    settings: LazySettings,
) -> None:
    settings.RAG_MAX_COLLECTIONS_PER_QUESTION = 2
    with pytest.raises(InvalidQuestion, match="At most 2 collections"):
        async_to_sync(turn_open)(
            user_id=None,
            conversation_id=None,
            question="Leave?",
            collection_names=["a", "b", "c"],
            client=TurnClient.COMMAND,
        )
