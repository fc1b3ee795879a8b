from collections import Counter

import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

from apps.answers.routing.features import (
    HAND_FEATURE_NAMES,
    MAX_FEATURE_CHARS,
    char_ngrams,
    comparison_steps,
    decompose_query,
    feature_text,
    hand_features,
    is_follow_up_fragment,
    multi_part_steps,
    word_ngrams,
)
from apps.answers.routing.types import Intent
from apps.corpus.text import normalise_text


def test_feature_text_unifies_persian_variants_and_digits():
    assert feature_text("  ARABIC  كيك ي ۱۴۰۳ ٢ ") == "arabic کیک ی 1403 2"
    assert feature_text("می\u200cخواهم") == feature_text("می خواهم")
    assert feature_text("چیه؟") == "چیه?"
    assert feature_text("مَرخَصی") == "مرخصی"
    assert feature_text("خانۀ ﻛﺘﺎﺏ") == "خانه کتاب"  # presentation forms fold to letters


def test_feature_text_is_the_shared_normaliser_plus_folding():
    # Folding only removes distinctions: two texts the normaliser makes equal stay equal.
    for text in ["كتاب\u200c  ها", "  Line one.\n\nLine ۲ ", "مَرخَصی\u0640"]:
        assert feature_text(text) == feature_text(normalise_text(text))


def test_feature_text_bounds_its_input():
    assert len(feature_text("a" * 10_000)) == MAX_FEATURE_CHARS


@pytest.mark.parametrize(
    "text", ["vpn setup?", "how do i reset my password", "فرق بین sow و msa چیه", "a bb ccc"]
)
def test_char_ngrams_match_scikit_learn_char_wb(text):
    reference = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), lowercase=False)
    assert Counter(char_ngrams(text)) == Counter(reference.build_analyzer()(text))


def test_word_ngrams_are_unigrams_and_bigrams():
    assert word_ngrams("vpn setup on mac") == [
        "vpn",
        "setup",
        "on",
        "mac",
        "vpn setup",
        "setup on",
        "on mac",
    ]
    assert word_ngrams("") == []


def test_hand_features_have_one_value_per_name_in_unit_range():
    for text in ["", "hi", "PPO vs HMO?", "x " * 500, "چطور مرخصی بگیرم؟"]:
        values = hand_features(feature_text(text))
        assert len(values) == len(HAND_FEATURE_NAMES)
        assert all(0.0 <= v <= 1.0 for v in values)


def test_hand_features_fire_on_their_cues():
    named = dict(
        zip(HAND_FEATURE_NAMES, hand_features("difference between ppo and hmo?"), strict=True)
    )
    assert named["comparison"] == 1.0
    assert named["question_mark"] == 1.0
    assert named["social"] == 0.0
    greeting = dict(zip(HAND_FEATURE_NAMES, hand_features("سلام"), strict=True))
    assert greeting["social"] == 1.0


@pytest.mark.parametrize(
    "text",
    [
        "and for contractors?",
        "what about Persian?",
        "no, I meant the one on Thursday",
        "و برای پیمانکارها؟",
        "در مورد کارمندان پاره وقت چی؟",
    ],
)
def test_follow_up_fragments_are_detected(text):
    assert is_follow_up_fragment(text)


@pytest.mark.parametrize(
    "text",
    [
        "and",
        "how do I request parental leave?",
        "on-call pay vs overtime pay",
        "and what about the rules for contractors who work abroad more than ninety days a year",
        "سلام",
    ],
)
def test_standalone_queries_are_not_fragments(text):
    assert not is_follow_up_fragment(text)


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("PPO vs HMO", ("What is PPO?", "What is HMO?")),
        (
            "difference between sick leave and personal leave?",
            ("What is sick leave?", "What is personal leave?"),
        ),
        (
            "compare Basic, Pro and Enterprise on price",
            (
                "What is the price of Basic?",
                "What is the price of Pro?",
                "What is the price of Enterprise?",
            ),
        ),
        ("تفاوت مرخصی استحقاقی و استعلاجی چیه؟", ("مرخصی استحقاقی چیست؟", "استعلاجی چیست؟")),
        ("کدام بهتر است، اسلک یا تیمز؟", ("اسلک چیست؟", "تیمز چیست؟")),
    ],
)
def test_comparisons_split_into_one_question_per_side(text, steps):
    assert comparison_steps(text) == steps
    assert decompose_query(text, Intent.COMPARISON) == steps


@pytest.mark.parametrize(
    ("text", "steps"),
    [
        ("what is the vpn and how do I install it?", ("what is the vpn", "how do I install it?")),
        (
            "how many days do I get? can I carry them over?",
            ("how many days do I get?", "can I carry them over?"),
        ),
        (
            "request the budget and then get finance approval",
            ("request the budget", "get finance approval"),
        ),
        (
            "روش تحقیق مقاله چی بود و همچنین محدودیت‌هاش چیه؟",
            ("روش تحقیق مقاله چی بود", "محدودیت‌هاش چیه؟"),
        ),
        (
            "چند روز مرخصی دارم؟ موقع استعفا چی میشه؟",
            ("چند روز مرخصی دارم؟", "موقع استعفا چی میشه؟"),
        ),
    ],
)
def test_multi_part_questions_split_into_parts(text, steps):
    assert multi_part_steps(text) == steps


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("terms and conditions of the NDA", Intent.FACTUAL_QUESTION),
        ("how do I reset my password", Intent.PROCEDURAL),
        ("hi and thanks", Intent.CONVERSATIONAL),
        ("", Intent.SEARCH),
    ],
)
def test_single_questions_have_no_steps(text, intent):
    assert decompose_query(text, intent) == ()


def test_steps_are_capped_at_four():
    text = "compare A vs B vs C vs D vs E vs F"
    assert len(decompose_query(text, Intent.COMPARISON)) == 4
