"""The post-turn step: title, categories (closed list, replaced each turn), attribution."""

from __future__ import annotations

import json

import pytest

from apps.analytics.models import Category, ConversationCategory
from apps.analytics.post_turn import (
    CategoryOption,
    decision_from_model,
    post_turn_schema,
    title_from_question,
)
from apps.analytics.services import post_turn_run
from apps.answers.models import Citation, Conversation, Turn, TurnStatus
from apps.corpus.ingestion.services import (
    collection_get_or_create,
    document_process,
    document_submit,
)
from tests.conftest import CountingEmbedder

OPTIONS = [CategoryOption(1, "Search", "finding documents"), CategoryOption(2, "Setup", "install")]


@pytest.mark.parametrize(
    ("question", "title"),
    [
        ("How do I install the VPN client on Linux?", "Installing the VPN client on Linux"),
        ("what is the leave policy", "The leave policy"),
        ("hi", None),
        ("Thanks!", None),
        ("چگونه کلاینت وی‌پی‌ان را نصب کنم؟", "چگونگی نصب کلاینت وی‌پی‌ان"),
    ],
)
def test_title_from_question(question: str, title: str | None) -> None:
    assert title_from_question(question) == title


def test_model_output_is_validated_and_deduplicated() -> None:
    raw = (
        "```json\n"
        + json.dumps(
            {
                "title": "VPN setup",
                "categories": ["Setup", "Setup", "setup", "Nope"],
                "attributed": ["c1", "c9"],
            }
        )
        + "\n```"
    )
    decision = decision_from_model(raw, options=OPTIONS, aliases=["c1", "c2"], model="m")
    assert decision.title == "VPN setup"
    assert decision.categories == ((2, 1.0),)
    assert decision.attributed_aliases == ("c1",)


def test_schema_enumerates_the_closed_list() -> None:
    schema = post_turn_schema(OPTIONS, ["c1"])
    assert schema["properties"]["categories"]["items"]["enum"] == ["Search", "Setup"]
    assert schema["properties"]["categories"]["maxItems"] == 5


def _turn(conversation: Conversation, index: int, question: str, answer: str, **kw: object) -> Turn:
    return Turn.objects.create(
        conversation=conversation,
        index=index,
        question=question,
        answer=answer,
        status=TurnStatus.FINISHED,
        intent="factual_question",
        **kw,
    )


@pytest.mark.django_db
def test_offline_run_sets_title_replaces_categories_and_attributes(
    embedder: CountingEmbedder, settings: object
) -> None:
    settings.RAG_CATEGORY_THRESHOLD = 0.3  # type: ignore[attr-defined]
    vpn = Category.objects.create(name="VPN", description="vpn client install wireguard profile")
    Category.objects.create(name="Leave", description="annual leave days holiday vacation")
    collection = collection_get_or_create(name="IT")
    result = document_submit(
        collection=collection, filename="vpn.md", data=b"# VPN\n\nInstall the VPN client."
    )
    document_process(document_id=result.document.pk)
    chunk_id = result.document.chunks.get().pk
    conversation = Conversation.objects.create()
    first = _turn(
        conversation,
        1,
        "how do I install the vpn client",
        "Install the VPN client profile.",
        context={"aliases": {"c1": chunk_id}},
    )

    post_turn_run(turn_id=first.pk, embedder=embedder, chat=None)

    conversation.refresh_from_db()
    assert conversation.title == "Installing the vpn client"
    assert list(ConversationCategory.objects.values_list("category__name", flat=True)) == ["VPN"]
    attributed = Citation.objects.get(turn=first)
    assert attributed.kind == "attributed" and attributed.chunk_id == chunk_id

    second = _turn(conversation, 2, "and my annual leave days?", "Twenty-six holiday days.")
    post_turn_run(turn_id=second.pk, embedder=embedder, chat=None)

    assert list(ConversationCategory.objects.values_list("category__name", flat=True)) == ["Leave"]
    conversation.refresh_from_db()
    assert conversation.title == "Installing the vpn client"  # the first title stays
    assert vpn.conversations.count() == 0


@pytest.mark.django_db
def test_failure_in_post_turn_never_touches_the_answer(
    embedder: CountingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from apps.analytics.tasks import post_turn_task

    conversation = Conversation.objects.create()
    turn = _turn(conversation, 1, "What is X?", "X is Y.")

    def explode(**kwargs: object) -> None:
        raise RuntimeError("classifier down")

    monkeypatch.setattr("apps.analytics.tasks.post_turn_run", explode)
    post_turn_task.call(turn.pk)

    turn.refresh_from_db()
    assert turn.answer == "X is Y." and turn.status == TurnStatus.FINISHED
