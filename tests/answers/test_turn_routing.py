"""What a whole turn does with its route: a question worded like a search is answered above
its list, a clear question the router was unsure of is answered, a vague word is asked about,
and a standalone question after another topic is searched as asked (real PostgreSQL, real
retrieval, the offline composer)."""

from __future__ import annotations

import pytest

from apps.answers.composing import ExtractiveComposer
from apps.answers.models import Conversation, Turn, TurnStatus
from apps.answers.providers.registry import Providers
from apps.answers.routing.types import Intent, TurnAction
from apps.answers.turn.services import turn_start
from apps.corpus.ingestion.services import (
    collection_get_or_create,
    document_process,
    document_submit,
)
from tests.answers.fakes import (
    FixedClassifier,
    classification,
    event_types,
    providers_fake,
    turn_collected,
)
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db

MANUAL = {
    "copytool.md": (
        "# Copy tool\n\n"
        "## Bandwidth\n\n"
        "The option --bwlimit=RATE limits the bandwidth of the copy tool to RATE kilobytes per "
        "second. A bare number is read as kilobytes.\n\n"
        "## Daemon\n\n"
        "The copy daemon listens on port 873 by default. Its lock file is kept in /run.\n"
    ),
    "backup.md": (
        "# Backups\n\n"
        "## Settings\n\n"
        "The backup settings live in the main configuration file. Each setting is one line "
        "of the form key = value.\n\n"
        "## Schedules\n\n"
        "Backups run every night at two o'clock; the schedule is a crontab line.\n"
    ),
    "pakkeh.md": (
        "# ابزار کپی\n\n"
        "## پهنای باند\n\n"
        "گزینهٔ --bwlimit پهنای باند ابزار کپی را محدود می‌کند.\n\n"
        "## رمز عبور\n\n"
        "ابزار mkpasswd رمز عبور کاربران را هش می‌کند و این امکان را می‌دهد که آن را در فایل "
        "ذخیره کنید.\n"
    ),
}


def _load(embedder: CountingEmbedder) -> None:
    collection = collection_get_or_create(name="Manual", public=True)
    for filename, text in MANUAL.items():
        result = document_submit(collection=collection, filename=filename, data=text.encode())
        document_process(document_id=result.document.pk, embedder=embedder)


def _providers(embedder: CountingEmbedder, classifier: FixedClassifier) -> Providers:
    fake = providers_fake(embedder, classifier=classifier)
    composer = ExtractiveComposer(embedder, min_evidence=0.0)
    return Providers(**{**fake.__dict__, "composer": composer})


def test_a_question_worded_like_a_search_gets_an_answer_with_its_list(
    embedder: CountingEmbedder,
) -> None:
    _load(embedder)
    search = FixedClassifier(result=classification(Intent.SEARCH))

    turn, events = turn_collected(
        _providers(embedder, search), "limit the bandwidth of the copy tool"
    )

    assert turn.status == TurnStatus.FINISHED and turn.action == TurnAction.HYBRID
    kinds = event_types(events)
    assert "search_results" in kinds and "citation" in kinds
    assert "--bwlimit=RATE" in turn.answer and not turn.refused
    listed = next(e for e in events if e["type"] == "search_results")["data"]["results"]
    assert listed[0]["source_file"] == "copytool.md"


def test_a_request_for_documents_keeps_the_bare_list(embedder: CountingEmbedder) -> None:
    _load(embedder)
    search = FixedClassifier(result=classification(Intent.SEARCH))

    turn, events = turn_collected(
        _providers(embedder, search), "find documents about the copy tool"
    )

    assert turn.action == TurnAction.SEARCH and turn.answer == ""
    assert event_types(events) == ["classification", "search_results", "finished"]


@pytest.mark.parametrize(
    ("question", "expected"),
    [("default port of the copy daemon", "873"), ("پهنای باند ابزار کپی؟", "--bwlimit")],
)
def test_a_clear_question_the_router_is_unsure_of_is_answered(
    embedder: CountingEmbedder, question: str, expected: str
) -> None:
    _load(embedder)
    unsure = FixedClassifier(result=classification(Intent.SEARCH, confidence=0.3))

    turn, events = turn_collected(_providers(embedder, unsure), question)

    assert "clarification" not in event_types(events)
    assert turn.action == TurnAction.HYBRID and expected in turn.answer


def test_a_question_the_documents_do_not_hold_is_still_clarified(
    embedder: CountingEmbedder,
) -> None:
    _load(embedder)
    unsure = FixedClassifier(result=classification(confidence=0.3))

    turn, events = turn_collected(
        _providers(embedder, unsure), "which colour do the penguins prefer"
    )

    assert turn.action == TurnAction.CLARIFY and "clarification" in event_types(events)


@pytest.mark.parametrize("intent", [Intent.CONVERSATIONAL, Intent.FACTUAL_QUESTION])
def test_a_vague_word_gets_a_clarifying_question_offering_sections(
    embedder: CountingEmbedder, intent: Intent
) -> None:
    _load(embedder)
    sure = FixedClassifier(result=classification(intent, confidence=0.95))

    turn, events = turn_collected(_providers(embedder, sure), "settings")

    assert turn.action == TurnAction.CLARIFY
    data = next(e for e in events if e["type"] == "clarification")["data"]
    assert data["options"] and data["options"][0] == "Settings (Backups)"
    # Every offer is a heading or a title, never the first words of a passage.
    assert all(o.endswith(")") or o in {"Backups", "Copy tool"} for o in data["options"])


def test_chit_chat_the_sections_do_not_name_stays_chat(embedder: CountingEmbedder) -> None:
    _load(embedder)
    chat = FixedClassifier(result=classification(Intent.CONVERSATIONAL, confidence=0.95))

    turn, _ = turn_collected(_providers(embedder, chat), "never mind")

    assert turn.action == TurnAction.CHAT


def _after(question: str) -> Conversation:
    conversation = Conversation.objects.create()
    earlier = turn_start(conversation=conversation, question=question)
    Turn.objects.filter(pk=earlier.pk).update(answer="An answer.", status=TurnStatus.FINISHED)
    return conversation


@pytest.mark.parametrize(
    ("first", "question"),
    [
        (
            "When do the backups run?",
            "How long does the copy tool wait before it retries the daemon connection?",
        ),
        (
            "پشتیبان‌ها چه زمانی اجرا می‌شوند؟",
            "کدام ابزار این امکان را می‌دهد که رمز عبور کاربران را هش کنیم؟",
        ),
    ],
)
def test_a_standalone_question_after_an_unrelated_one_is_searched_as_asked(
    embedder: CountingEmbedder, first: str, question: str
) -> None:
    _load(embedder)
    sure = FixedClassifier(result=classification(confidence=0.95))

    turn, _ = turn_collected(_providers(embedder, sure), question, _after(first))

    assert [v["kind"] for v in turn.retrieval_trace["variants"]] == ["original"]


def test_a_dependent_question_is_still_rewritten(embedder: CountingEmbedder) -> None:
    _load(embedder)
    sure = FixedClassifier(result=classification(confidence=0.95))

    turn, _ = turn_collected(
        _providers(embedder, sure), "and its default?", _after("Which port does the daemon use?")
    )

    variants = {v["kind"]: v["text"] for v in turn.retrieval_trace["variants"]}
    assert "port" in variants["rewrite"] and "daemon" in variants["rewrite"]
