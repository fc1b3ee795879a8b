"""Invariants of the labelled and unseen query sets the router is trained and judged on."""

import hashlib
from collections import Counter

import pytest

from apps.answers.routing.evaluation import (
    LABELLED_PATH,
    UNSEEN_PATH,
    UNSEEN_SHA256,
    LabelledQuery,
    load_examples,
)
from apps.answers.routing.features import is_follow_up_fragment
from apps.answers.routing.types import Intent, Tier
from apps.corpus.text import detect_language


@pytest.fixture(scope="module")
def labelled() -> tuple[LabelledQuery, ...]:
    return load_examples(LABELLED_PATH)


@pytest.fixture(scope="module")
def unseen() -> tuple[LabelledQuery, ...]:
    return load_examples(UNSEEN_PATH)


def test_labelled_set_is_large_enough_and_covers_every_intent(labelled):
    counts = Counter(example.intent for example in labelled)
    assert len(labelled) >= 460
    assert set(counts) == set(Intent)
    assert min(counts.values()) >= 70


def test_at_least_thirty_percent_persian(labelled):
    persian = sum(example.language == "fa" for example in labelled)
    assert persian / len(labelled) >= 0.30


def test_split_is_about_75_25_within_every_intent_and_language(labelled):
    groups = Counter((e.intent, e.language, e.split) for e in labelled)
    for intent in Intent:
        for language in ("en", "fa"):
            test = groups[(intent, language, "test")]
            total = test + groups[(intent, language, "train")]
            assert 0.18 <= test / total <= 0.32, (intent, language, test, total)
    assert {e.split for e in labelled} == {"train", "test"}


def test_language_labels_agree_with_the_detector(labelled, unseen):
    for example in (*labelled, *unseen):
        assert detect_language(example.text) == example.language, example.text


def test_texts_are_unique_and_the_sets_are_disjoint(labelled, unseen):
    texts = [example.text for example in labelled]
    assert len(texts) == len(set(texts))
    assert not set(texts) & {example.text for example in unseen}


def test_conversational_is_always_t0_and_nothing_else_is(labelled, unseen):
    for example in (*labelled, *unseen):
        assert (example.tier is Tier.T0) == (example.intent is Intent.CONVERSATIONAL)


def test_every_follow_up_fragment_records_the_question_it_follows(labelled):
    for example in labelled:
        assert bool(example.context) == is_follow_up_fragment(example.text), example.text


def test_unseen_set_is_large_enough_and_never_edited(unseen):
    assert len(unseen) >= 80
    assert {example.split for example in unseen} == {"unseen"}
    assert set(Counter(example.intent for example in unseen)) == set(Intent)
    assert hashlib.sha256(UNSEEN_PATH.read_bytes()).hexdigest() == UNSEEN_SHA256


def test_load_examples_filters_by_split(labelled):
    test = load_examples(LABELLED_PATH, split="test")
    assert test and all(example.split == "test" for example in test)
    assert len(test) == sum(example.split == "test" for example in labelled)


@pytest.mark.parametrize(
    "line",
    [
        '{"text": "hi", "intent": "greeting", "tier": "T0", "language": "en", "split": "train"}',
        '{"text": "hi", "intent": "conversational", "tier": "T9", "language": "en", "split": "train"}',
        '{"text": "hi", "intent": "conversational", "tier": "T0", "language": "de", "split": "train"}',
        '{"text": "hi", "intent": "conversational", "tier": "T0", "language": "en", "split": "dev"}',
        '{"text": "hi"}',
        "not json",
    ],
)
def test_load_examples_rejects_bad_lines_with_their_number(tmp_path, line):
    path = tmp_path / "bad.jsonl"
    good = '{"text": "hello", "intent": "conversational", "tier": "T0", "language": "en", "split": "train"}'
    path.write_text(f"{good}\n{line}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.jsonl:2"):
        load_examples(path)
