"""Follow-ups rewritten into standalone queries; standalone questions left alone."""

from __future__ import annotations

import pytest

from apps.answers.providers.chat import ChatUnavailable
from apps.answers.retrieval.rewrite import (
    entities_answered,
    is_dependent,
    query_rewrite,
    rewrite_offline,
)
from apps.answers.routing.types import HistoryMessage
from tests.answers.fakes import ScriptedChat


def _asked(*questions: str) -> tuple[HistoryMessage, ...]:
    messages: list[HistoryMessage] = []
    for question in questions:
        messages += [HistoryMessage("user", question), HistoryMessage("assistant", "An answer.")]
    return tuple(messages)


@pytest.mark.parametrize(
    "question",
    [
        "and for contractors?",
        "who stars in it?",
        "what did he do after that?",
        "Which book is it adapted from?",
        "و برای پیمانکاران؟",
        "کارگردانش کیست؟",
        "او در چه سالی به دنیا آمد؟",
    ],
)
def test_a_question_that_leans_on_the_conversation_is_dependent(question: str) -> None:
    assert is_dependent(question)


@pytest.mark.parametrize(
    "question",
    [
        "Who directed Never Cry Wolf?",
        "What is the per diem for contractors?",
        "How do I know that the upload worked?",
        "Does it support SSE?",  # a pointer back, but a named thing of its own
        "گاندی چه کسی بود؟",
    ],
)
def test_a_question_with_its_own_topic_stands_alone(question: str) -> None:
    assert not is_dependent(question)


def test_a_follow_up_carries_the_earlier_topic() -> None:
    rewrite = rewrite_offline(
        question="Which book is it adapted from?", history=_asked("Who directed Never Cry Wolf?")
    )
    assert rewrite is not None and rewrite.method == "rules"
    assert rewrite.query.startswith("Which book is it adapted from?")
    assert "Never Cry Wolf" in rewrite.carried


def test_a_chain_of_follow_ups_reaches_back_to_the_question_that_opened_the_topic() -> None:
    history = _asked("Who is Jacqueline Fontyn?", "When was she born?")
    rewrite = rewrite_offline(question="Who did she marry?", history=history)
    assert rewrite is not None and "Jacqueline Fontyn" in rewrite.carried


def test_a_topic_switch_ends_the_chain() -> None:
    history = _asked(
        "What is Port Blair?", "What is it the capital of?", "Who is Jacqueline Fontyn?"
    )
    rewrite = rewrite_offline(question="When was she born?", history=history)
    assert rewrite is not None and rewrite.carried == ("Jacqueline Fontyn",)
    assert "Port" not in rewrite.query


def test_a_new_question_after_another_topic_is_not_polluted() -> None:
    history = _asked("Who directed Never Cry Wolf?")
    assert (
        rewrite_offline(question="What is the per diem for contractors?", history=history) is None
    )
    assert rewrite_offline(question="Who is Jacqueline Fontyn?", history=history) is None


# Complete questions with a subject of their own, each holding a word a follow-up could use
# to point back ("it", "that", "این") or opening like a fragment ("in ...", "برای ...").
STANDALONE_WITH_POINTERS = [
    "How long does the backup tool keep a snapshot before it deletes the oldest one?",
    "how do I check a firewall rules file for errors without loading it",
    "what does it mean when the package manager says packages have been kept back",
    "in which file is the ssh port set?",
    "کدام ابزار این امکان را می‌دهد که رمز عبور کاربران را هش کنیم؟",
    "برای پشتیبان‌گیری کدام ابزار مناسب است؟",
]


@pytest.mark.parametrize("question", STANDALONE_WITH_POINTERS)
def test_a_standalone_question_after_an_unrelated_one_is_not_rewritten(question: str) -> None:
    for earlier in ("Who directed Never Cry Wolf?", "سامبا چه سرویسی است؟"):
        assert rewrite_offline(question=question, history=_asked(earlier)) is None


@pytest.mark.parametrize(
    "question", ["and its default?", "و پیش‌فرض آن؟", "why?", "چرا؟", "in what year?"]
)
def test_a_dependent_question_is_still_rewritten(question: str) -> None:
    rewrite = rewrite_offline(
        question=question, history=_asked("Which port does the rsync daemon listen on?")
    )
    assert rewrite is not None and "rsync" in rewrite.carried


def test_persian_follow_up_carries_the_persian_topic() -> None:
    history = _asked("بر چه اساسی رئال موفق ترین تیم در تاریخ فوتبال اروپا است؟")
    rewrite = rewrite_offline(question="آن چند بار قهرمان لیگ شده؟", history=history)
    assert rewrite is not None and "رئال" in rewrite.carried
    assert "چه" not in rewrite.carried  # question words are not the topic
    assert rewrite_offline(question="گاندی چه کسی بود؟", history=history) is None


def test_without_history_nothing_is_rewritten() -> None:
    assert rewrite_offline(question="who stars in it?", history=()) is None


async def test_with_a_chat_model_its_rewrite_is_used() -> None:
    chat = ScriptedChat(["Which book is Never Cry Wolf adapted from?"])
    rewrite = await query_rewrite(
        question="Which book is it adapted from?",
        history=_asked("Who directed Never Cry Wolf?"),
        chat=chat,
        timeout_s=2.0,
    )
    assert rewrite is not None and rewrite.method == "chat"
    assert rewrite.query == "Which book is Never Cry Wolf adapted from?"
    assert "Never Cry Wolf" in chat.messages[-1].content  # the model saw the conversation


async def test_a_chat_model_that_repeats_the_question_means_it_stands_alone() -> None:
    rewrite = await query_rewrite(
        question="What is the per diem for contractors?",
        history=_asked("Who directed Never Cry Wolf?"),
        chat=ScriptedChat(["What is the per diem for contractors?"]),
        timeout_s=2.0,
    )
    assert rewrite is None


async def test_a_standalone_question_is_never_sent_to_the_chat_model() -> None:
    chat = ScriptedChat(["What is the per diem for contractors in Never Cry Wolf?"])
    rewrite = await query_rewrite(
        question="What is the per diem for contractors?",
        history=_asked("Who directed Never Cry Wolf?"),
        chat=chat,
        timeout_s=2.0,
    )
    assert rewrite is None
    assert chat.messages == []  # not asked at all


async def test_a_failing_chat_model_falls_back_to_the_rules() -> None:
    rewrite = await query_rewrite(
        question="who stars in it?",
        history=_asked("Who directed Never Cry Wolf?"),
        chat=ScriptedChat(error=ChatUnavailable("down")),
        timeout_s=2.0,
    )
    assert rewrite is not None and rewrite.method == "rules"
    assert "Never Cry Wolf" in rewrite.carried


def _answered(question: str, answer: str) -> tuple[HistoryMessage, ...]:
    return (HistoryMessage("user", question), HistoryMessage("assistant", answer))


DIRECTED = _answered(
    "Who directed Never Cry Wolf?",
    "Never Cry Wolf is a 1983 American drama film directed by Carroll Ballard [c1]. "
    "It is based on the memoir by Farley Mowat [c1].",
)


def test_a_person_only_the_answer_named_leads_the_rewrite() -> None:
    rewrite = rewrite_offline(question="What else did he direct?", history=DIRECTED)

    assert rewrite is not None
    assert rewrite.carried[0] == "Carroll Ballard"
    assert "Never Cry Wolf" in rewrite.carried  # the question's topic is still searched
    assert "American" not in rewrite.carried  # one capitalised word is no name to carry


def test_the_answer_names_come_after_the_questions_topic_otherwise() -> None:
    rewrite = rewrite_offline(question="Which book is it adapted from?", history=DIRECTED)
    assert rewrite is not None
    assert rewrite.carried.index("Never Cry Wolf") < rewrite.carried.index("Carroll Ballard")

    # "Who is X?" asks about X; "she" is X, not someone the answer mentions.
    history = _answered(
        "Who is Jacqueline Fontyn?",
        "Jacqueline Fontyn (born 1930) is a Belgian composer. She married Camille Schmit.",
    )
    rewrite = rewrite_offline(question="When was she born?", history=history)
    assert rewrite is not None and rewrite.carried[0] == "Jacqueline Fontyn"


def test_the_answers_names_never_reach_a_new_question() -> None:
    assert rewrite_offline(question="Who is Farley Mowat?", history=DIRECTED) is None
    assert (
        rewrite_offline(question="What is the per diem for contractors?", history=DIRECTED) is None
    )


def test_names_of_an_answer_skip_sentence_capitals_and_its_own_question() -> None:
    names = entities_answered(
        "See the Admin Audit page [c1]. Run `manage.py rechunk` after an upgrade. "
        "Never Cry Wolf was shot in Canada.",
        asked="Who directed Never Cry Wolf?",
    )
    assert names == ["manage.py rechunk", "Admin Audit"]
