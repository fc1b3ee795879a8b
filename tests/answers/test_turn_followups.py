"""Follow-ups through the whole turn: from the cited document's own sections after an answer,
rephrasings toward the closest documents after a refusal, never another turn's topic."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync

from apps.answers.events import Envelope
from apps.answers.models import Conversation
from apps.answers.providers.registry import Providers
from apps.answers.turn.run import turn_run
from apps.answers.turn.services import turn_start
from apps.corpus.ingestion.services import (
    collection_get_or_create,
    document_process,
    document_submit,
)
from tests.answers.fakes import ScriptedComposer, SureRefuser, handbook_load, providers_fake
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db

# Sections long enough to be chunks of their own (RAG_CHUNK_MAX_WORDS is 140).
_FILLER = " ".join(["Ask the office team if anything in this section is unclear."] * 12)
ONBOARDING = f"""# Onboarding guide

## Laptop setup

The laptop arrives on your first day. Sign in with the password from the welcome letter.
{_FILLER}

## Door badge

The door badge opens the main door and the car park. Collect it at the front desk.
{_FILLER}

## Payroll calendar

Salaries are paid on the last working day of each month. Payslips arrive by email.
{_FILLER}
"""


def _load(embedder: CountingEmbedder) -> None:
    handbook_load(embedder)
    collection = collection_get_or_create(name="Handbook", public=True)
    result = document_submit(
        collection=collection, filename="onboarding.md", data=ONBOARDING.encode()
    )
    document_process(document_id=result.document.pk, embedder=embedder)


def _followups(providers: Providers, question: str, conversation: Conversation) -> list[str]:
    turn = turn_start(conversation=conversation, question=question)

    async def collect() -> list[Envelope]:
        return [e async for e in turn_run(turn_id=turn.pk, providers=providers)]

    events = async_to_sync(collect)()
    return next(e["data"]["questions"] for e in events if e["type"] == "followups")


def test_after_an_answer_the_suggestions_are_the_cited_sections_neighbours(
    embedder: CountingEmbedder,
) -> None:
    _load(embedder)
    composer = ScriptedComposer(pieces=("Sign in with the password from the welcome letter [c1].",))

    questions = _followups(
        providers_fake(embedder, composer=composer),
        "How do I sign in to my laptop on the first day?",
        Conversation.objects.create(),
    )

    assert questions
    # The cited section and those beside it, not the VPN, leave or expenses documents.
    sections = {
        "What is the laptop setup?",
        "What is the door badge?",
        "What is the payroll calendar?",
    }
    assert set(questions) <= sections
    assert "What is the door badge?" in questions


def test_after_a_refusal_the_suggestions_ask_the_closest_documents_and_nothing_else(
    embedder: CountingEmbedder,
) -> None:
    _load(embedder)
    conversation = Conversation.objects.create()
    answered = ScriptedComposer(pieces=("Sign in with the password from the welcome letter [c1].",))
    _followups(
        providers_fake(embedder, composer=answered),
        "How do I sign in to my laptop on the first day?",
        conversation,
    )

    questions = _followups(
        providers_fake(embedder, composer=SureRefuser()),  # type: ignore[arg-type]
        "What is the refund deadline for travel expenses?",
        conversation,
    )

    assert questions
    assert all(q.startswith("What does ") for q in questions)
    assert all(q.endswith(" say about the refund deadline for travel expenses?") for q in questions)
    assert "What does Expenses say about the refund deadline for travel expenses?" in questions
    # Nothing of the first turn's topic, nor a heading turned into a new subject.
    assert not any("laptop" in q.lower() or "badge" in q.lower() for q in questions)
