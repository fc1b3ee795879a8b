"""The extractive composer's answerability signals, the model over them, and the refusal it drives."""

from __future__ import annotations

import pytest

from apps.answers.composing import Refusal, SupportSignal
from apps.answers.composing.answerability import (
    ANSWERABILITY_MODEL,
    SIGNAL_NAMES,
    AnswerabilityModel,
    answerability_score,
    answerability_signals,
)
from apps.answers.composing.candidates import Evidence, Scored, Sentence
from tests.answers.compose import EXPENSES, LEAVE, ask, composer, run, window


def scored(text: str, *, rank: int, score: float, terms: str = "") -> Scored:
    from apps.answers.composing.terms import content_terms

    sentence = Sentence(
        text=text,
        alias=f"c{rank + 1}",
        rank=rank,
        position=0,
        terms=content_terms(terms or text),
        step=False,
    )
    return Scored(sentence, similarity=0.5, overlap=0.5, score=score, vector=None)


def signals_of(query: str, *sentences: Scored) -> dict[str, float]:
    evidence = Evidence(tuple(sentences), tuple(sentences[:1]), 0.6)
    return answerability_signals(query=query, context=window(), evidence=evidence).as_mapping()


@pytest.mark.parametrize(
    ("query", "negated", "superlative"),
    [
        ("Which countries does the Vatican not border?", 1.0, 0.0),
        ("Why can't a compass point east?", 1.0, 0.0),
        ("What is the largest airport in Iran?", 0.0, 1.0),
        ("What did Descartes write?", 0.0, 0.0),
        ("واتیکان با کدام کشورها هم مرز نیست؟", 1.0, 0.0),
        ("قطب نما با چه چیزی جهت را نشان نمی دهد؟", 1.0, 0.0),
        ("بزرگترین فرودگاه ایران کجاست؟", 0.0, 1.0),
        ("دقیق ترین قطب نما چه نام دارد؟", 0.0, 1.0),
        ("بیشترین منبع سوخت کجاست؟", 0.0, 1.0),
        ("پایتخت اسپانیا کجاست؟", 0.0, 0.0),
    ],
)
def test_negated_and_superlative_questions_are_read_in_both_languages(
    query: str, negated: float, superlative: float
) -> None:
    signals = signals_of(query, scored("Some sentence.", rank=0, score=1.0))
    assert (signals["negated"], signals["superlative"]) == (negated, superlative)


def test_a_query_term_the_best_chunk_lacks_is_missing() -> None:
    # "Barcelona" is only in the second chunk; the best sentence is the first chunk's.
    best = scored("Real Madrid won the cup many times: thirteen.", rank=0, score=0.9)
    other = scored("Barcelona plays at Camp Nou.", rank=1, score=0.4)
    swapped = signals_of("How many times has Barcelona won the cup?", best, other)
    asked = signals_of("How many times has Real Madrid won the cup?", best, other)
    assert swapped["missing_share"] > 0.0 and swapped["missing_rarest"] == 1.0
    assert asked["missing_share"] == 0.0 and asked["missing_rarest"] == 0.0
    assert swapped["asks_quantity"] == 1.0


def test_signals_without_sentences_or_terms_are_zero() -> None:
    signals = signals_of("the and of")
    assert signals["missing_share"] == signals["best_similarity"] == signals["top_cosine"] == 0.0
    assert list(signals) == list(SIGNAL_NAMES)


def test_the_score_is_the_logistic_over_named_signals() -> None:
    model = AnswerabilityModel(intercept=-1.0, weights=(("evidence", 2.0), ("negated", -3.0)))
    assert answerability_score({"evidence": 0.5}, model) == pytest.approx(0.5)
    assert answerability_score({"evidence": 0.5, "negated": 1.0}, model) < 0.05
    assert answerability_score({}, model) == pytest.approx(1 / (1 + 2.718281828**1.0))


async def test_the_composer_sends_its_signals_and_refuses_below_the_answerability_threshold() -> (
    None
):
    request = ask("When must expense claims be submitted?", window(EXPENSES, LEAVE))
    answered = await run(composer(min_answerability=0.0), request)
    refused = await run(composer(min_answerability=1.0), request)

    assert not any(isinstance(e, Refusal) for e in answered)
    signal = next(e for e in answered if isinstance(e, SupportSignal))
    assert [name for name, _ in signal.signals] == list(SIGNAL_NAMES)
    assert isinstance(refused[-1], Refusal) and refused[-1].reason.startswith("answerability")
    with pytest.raises(ValueError, match="min_answerability"):
        composer(min_answerability=1.5)


def test_the_shipped_model_reads_every_signal_it_names() -> None:
    assert {name for name, _ in ANSWERABILITY_MODEL.weights} <= set(SIGNAL_NAMES)


@pytest.mark.parametrize(
    ("query", "chosen", "asks", "unstated"),
    [
        ("What is the default log level?", "The level says how much is logged.", 1.0, 1.0),
        ("What is the default log level?", "The default is INFO.", 1.0, 0.0),
        ("Which option prints the URLs?", "Use the --print-uris option.", 1.0, 0.0),
        ("Can contractors book hotels?", "Contractors book through the desk.", 0.0, 0.0),
        ("Tell me about the travel desk", "The desk books trips.", 0.0, 0.0),
    ],
)
def test_whether_the_chosen_sentences_state_the_asked_kind(
    query: str, chosen: str, asks: float, unstated: float
) -> None:
    signals = signals_of(query, scored(chosen, rank=0, score=1.0))
    assert (signals["asks_kind"], signals["kind_unstated"]) == (asks, unstated)
