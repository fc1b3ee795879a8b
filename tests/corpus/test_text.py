"""The shared text toolkit: normaliser, language detector, sentence splitter, greetings."""

from __future__ import annotations

import pytest

from apps.answers.routing.trained import TrainedClassifier
from apps.corpus.ingestion.chunking import chunk_blocks
from apps.corpus.parsing import Block
from apps.corpus.text import (
    ZWNJ,
    detect_language,
    estimate_tokens,
    greeting_kind,
    is_greeting,
    last_sentence_start,
    normalise_text,
    sentence_spans,
    split_sentences,
)

# --- language ------------------------------------------------------------------------------

MIXED_SAMPLE = [
    ("how do I reset my password", "en"),
    ("مرخصی سالانه چند روز است؟", "fa"),
    ("فرق بین SOW و MSA چیه", "fa"),
    ("what does مرخصی mean in the HR policy", "en"),
    ("RFC ۱۲۳۴۵۶", "en"),  # Persian digits are not Persian letters
    ("سند ۱۲۳ RFC", "en"),
    ("كتاب الكتروني", "fa"),  # Persian written with Arabic letter forms
    ("مرحبا كيف حالك", "fa"),
    ("", "en"),
]


@pytest.mark.parametrize(
    ("text", "language"),
    [
        *MIXED_SAMPLE,
        ("👍🙏", "en"),
        ("12345 ?!", "en"),
        ("سلام", "fa"),
        ("چطور کلید API بسازم؟", "fa"),
    ],
)
def test_detect_language_counts_letters_only(text: str, language: str) -> None:
    assert detect_language(text) == language


@pytest.fixture(scope="module")
def router() -> TrainedClassifier:
    return TrainedClassifier.from_artefact()


@pytest.mark.parametrize(("text", "language"), MIXED_SAMPLE)
def test_routing_and_ingestion_agree_on_the_language(
    router: TrainedClassifier, text: str, language: str
) -> None:
    routed = router.classify_sync(query=text).language
    chunks = chunk_blocks(title="", blocks=[Block(text=text, page=None, heading=None)])
    ingested = {chunk.language for chunk in chunks}
    assert routed == detect_language(text) == language
    assert ingested <= {language}  # no chunk at all for empty text


# --- normalisation -------------------------------------------------------------------------


def test_normalise_unifies_letter_forms_and_digits_and_drops_harakat() -> None:
    assert normalise_text("كتاب ي ۱۴۰۳ ٢") == "کتاب ی 1403 2"
    assert normalise_text("مَرخَصی") == "مرخصی"
    assert normalise_text("کتـــاب") == "کتاب"


def test_normalise_keeps_one_zwnj_and_line_breaks() -> None:
    assert normalise_text(f"می {ZWNJ}{ZWNJ} خواهم") == f"می{ZWNJ}خواهم"
    assert normalise_text("  a \u00a0 b\nc  ") == "a b\nc"


def test_estimate_tokens_weighs_persian_words_more() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("one two three four five") == 6
    assert estimate_tokens("یک دو سه چهار پنج") == 8


# --- sentences -----------------------------------------------------------------------------


def test_split_keeps_abbreviations_and_decimals_whole() -> None:
    text = "Dr. Smith paid 3.14 euros, e.g. for tea. Then he left! بعد رفت؟ تمام"
    assert split_sentences(text) == [
        "Dr. Smith paid 3.14 euros, e.g. for tea.",
        "Then he left!",
        "بعد رفت؟",
        "تمام",
    ]


def test_split_ends_sentences_at_line_breaks_and_closing_quotes() -> None:
    assert split_sentences('He said "go." Then\n\n- one\n- two') == [
        'He said "go."',
        "Then",
        "- one",
        "- two",
    ]


def test_options_are_explicit() -> None:
    text = "See e.g. this۔ «بله.» بعد"
    assert split_sentences(text) == ["See e.g. this۔ «بله.» بعد"]
    assert split_sentences(text, abbreviations=False) == ["See e.g.", "this۔ «بله.» بعد"]
    assert split_sentences(text, persian_marks=True) == ["See e.g. this۔", "«بله.»", "بعد"]


def test_spans_point_at_the_sentences() -> None:
    text = "  One.  Two?\n\nThree  \n"
    spans = sentence_spans(text)
    assert [text[start:end] for start, end in spans] == ["One.", "Two?", "Three  "]


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("One. Two", 5),
        ("One.\n  Two", 7),
        ("One line\n", 9),
        ("One. ", 5),
        ("Costs 3.", 0),  # a stop at the very end may still be "3.14"
        ("No boundary", 0),
        ("e.g. this", 5),
    ],
)
def test_last_sentence_start(text: str, start: int) -> None:
    assert last_sentence_start(text, abbreviations=False) == start


def test_last_sentence_start_honours_abbreviations_by_default() -> None:
    assert last_sentence_start("See e.g. this") == 0


# --- greetings -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Hello there!", "greeting"),
        ("سلام، وقت بخیر", "greeting"),
        ("Thanks a lot, that helped", "thanks"),
        ("خیلی ممنونم", "thanks"),
        ("ok bye", "farewell"),
        ("خداحافظ", "farewell"),
        ("Which hello world examples exist?", None),
        ("سلامت روان کارکنان", None),  # "health", not "hello"
        ("what is the leave policy", None),
    ],
)
def test_greeting_kind(text: str, kind: str | None) -> None:
    assert greeting_kind(text) == kind
    assert is_greeting(text) is (kind is not None)


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        (
            "Partition it with parted(8) (see Section 9.6.2, “Disk partition configuration”) "
            "into one partition. Then format it.",
            [
                "Partition it with parted(8) (see Section 9.6.2, “Disk partition configuration”) "
                "into one partition.",
                "Then format it.",
            ],
        ),
        (
            "The suite is a codename (e.g. stable or stretch). Flat ones have none.",
            ["The suite is a codename (e.g. stable or stretch).", "Flat ones have none."],
        ),
        (
            'It searched with. A follow-up ("who stars in it?") was rewritten. Done.',
            ["It searched with.", 'A follow-up ("who stars in it?") was rewritten.', "Done."],
        ),
        (
            "Use a tool (for instance fdisk. Or parted.) first. Then write.",
            ["Use a tool (for instance fdisk. Or parted.) first.", "Then write."],
        ),
        (
            "Since 1.8.26 it is off, cf. the notes, i.e. by default. Then",
            ["Since 1.8.26 it is off, cf. the notes, i.e. by default.", "Then"],
        ),
        ("9.6.2. Disk partition configuration", ["9.6.2. Disk partition configuration"]),
        ("(See Section 9.8 for more.) Then go.", ["(See Section 9.8 for more.)", "Then go."]),
        ("An open (bracket. Never closed.", ["An open (bracket.", "Never closed."]),
    ],
)
def test_split_never_cuts_inside_brackets_quotes_or_labels(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences
