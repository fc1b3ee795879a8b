"""apps/answers/turn/replay.py: what a stored turn still shows a reader who lost access to some of
its documents, including events stored before suggestions named their documents."""

from __future__ import annotations

from typing import Any

import pytest

from apps.answers.events import Envelope
from apps.answers.turn.clarify import clarification_question
from apps.answers.turn.replay import turn_events_visible
from apps.corpus.models import Document
from tests.factories import CitationFactory, CollectionFactory, DocumentFactory, TurnFactory

pytestmark = pytest.mark.django_db


def _envelope(turn_id: int, seq: int, type_: str, data: dict[str, Any]) -> Envelope:
    return Envelope(seq=seq, turn=turn_id, type=type_, data=data)


@pytest.fixture
def documents() -> tuple[Document, Document]:
    open_, closed = CollectionFactory.create(name="Open"), CollectionFactory.create(name="Closed")
    return (
        DocumentFactory.create(collection=open_, title="Leave"),
        DocumentFactory.create(collection=closed, title="Salaries"),
    )


def test_results_are_dropped_and_ranked_again(documents: tuple[Document, Document]) -> None:
    kept, hidden = documents
    turn = TurnFactory.create()
    results = [
        {"rank": 1, "document": hidden.pk, "title": "Salaries"},
        {"rank": 2, "document": kept.pk, "title": "Leave"},
        {"rank": 3, "document": 999999, "title": "Deleted since"},
    ]
    events = [_envelope(turn.pk, 1, "search_results", {"query": "q", "results": results})]
    (shown,) = turn_events_visible(
        turn_id=turn.pk, events=events, readable=frozenset({kept.collection_id})
    )
    assert shown["data"]["results"] == [{"rank": 1, "document": kept.pk, "title": "Leave"}]
    assert turn_events_visible(turn_id=turn.pk, events=events, readable=None) == events


def test_clarification_keeps_only_readable_topics_also_in_the_finished_event(
    documents: tuple[Document, Document],
) -> None:
    kept, hidden = documents
    turn = TurnFactory.create(action="clarify")
    question = clarification_question(language="en", options=["Leave", "Salaries"])
    data = {
        "question": question,
        "options": ["Leave", "Salaries"],
        "documents": [kept.pk, hidden.pk],
        "language": "en",
    }
    stored = [
        _envelope(turn.pk, 1, "clarification", data),
        _envelope(turn.pk, 2, "finished", {"answer": question, "action": "clarify"}),
    ]
    for event in stored:
        turn.events.create(seq=event["seq"], type=event["type"], data=event["data"])
    readable = frozenset({kept.collection_id})
    clarified, finished = turn_events_visible(turn_id=turn.pk, events=stored, readable=readable)
    assert clarified["data"]["options"] == ["Leave"]
    assert "Salaries" not in clarified["data"]["question"]
    assert finished["data"]["answer"] == clarified["data"]["question"]
    # A replay that starts after the clarification still rewrites the finished event...
    (only_end,) = turn_events_visible(turn_id=turn.pk, events=stored[1:], readable=readable)
    assert only_end["data"]["answer"] == clarified["data"]["question"]
    # ...and leaves it whole for a reader who still reads both.
    both = frozenset({kept.collection_id, hidden.collection_id})
    assert turn_events_visible(turn_id=turn.pk, events=stored[1:], readable=both) == stored[1:]


def test_suggestions_stored_without_their_documents_follow_the_cited_ones(
    documents: tuple[Document, Document],
) -> None:
    kept, hidden = documents
    turn = TurnFactory.create()
    CitationFactory.create(turn=turn, document=hidden, chunk=None)
    events = [
        _envelope(turn.pk, 1, "citation", {"alias": "c1", "document": hidden.pk}),
        _envelope(turn.pk, 2, "followups", {"questions": ["What about salaries?"]}),
        _envelope(turn.pk, 3, "finished", {"answer": "x", "action": "answer"}),
    ]
    shown = turn_events_visible(
        turn_id=turn.pk, events=events, readable=frozenset({kept.collection_id})
    )
    assert [e["type"] for e in shown] == ["followups", "finished"]
    assert shown[0]["data"]["questions"] == []
    everything = frozenset({kept.collection_id, hidden.collection_id})
    assert turn_events_visible(turn_id=turn.pk, events=events, readable=everything) == events
