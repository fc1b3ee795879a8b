import re
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.answers.streaming.citations import (
    CitationExtractor,
    CitationMark,
    StreamItem,
    TextPiece,
    citations_validate,
    extract_citations,
    sentences_without_citation,
)


def stream(chunks: list[str], *, max_hold: int = 48) -> tuple[str, list[CitationMark]]:
    """Feed chunks, close, and rebuild text and marks from the emitted items only."""
    extractor = CitationExtractor(max_hold=max_hold)
    items: list[StreamItem] = []
    for chunk in chunks:
        items += extractor.feed(chunk)
    items += extractor.close()
    text = "".join(item.text for item in items if isinstance(item, TextPiece))
    marks = [item for item in items if isinstance(item, CitationMark)]
    assert text == extractor.text
    assert tuple(marks) == extractor.marks
    return text, marks


def aliases(marks: tuple[CitationMark, ...] | list[CitationMark]) -> list[str]:
    return [mark.alias for mark in marks]


@pytest.mark.parametrize(
    ("raw", "expected_aliases"),
    [
        ("A[c1].", ["c1"]),
        ("A[C1].", ["c1"]),
        ("A[ c1 ].", ["c1"]),
        ("A[c1, c3].", ["c1", "c3"]),
        ("A[c1; c3].", ["c1", "c3"]),
        ("A[c1,c3 ; C4].", ["c1", "c3", "c4"]),
        ("A[c3, c1].", ["c3", "c1"]),
        ("A[c1, C1,c1].", ["c1"]),
        ("A[c2, c1, c2].", ["c2", "c1"]),
        ("A[c01].", ["c1"]),
    ],
)
def test_marker_forms_are_removed(raw: str, expected_aliases: list[str]) -> None:
    text, marks = extract_citations(raw)
    assert text == "A."
    assert aliases(marks) == expected_aliases
    assert all(mark.position == 1 for mark in marks)


@pytest.mark.parametrize(
    "raw",
    [
        "[see above]",
        "[1]",
        "[",
        "[[",
        "]",
        "a[]b",
        "[c]",
        "[cat]",
        "[c1 and c2]",
        "[c1,]",
        "[c1,,c2]",
        "[c 1]",
        "[c1\n]",
        "x [y] z",
        "arr[i] = 2",
        "end ",
        "  two  spaces  ",
    ],
)
def test_non_markers_pass_through_unchanged(raw: str) -> None:
    assert extract_citations(raw) == (raw, ())
    assert stream(list(raw)) == (raw, [])


def test_bracket_before_marker_is_released_and_marker_still_found() -> None:
    text, marks = extract_citations("x [[c1]] y")
    assert text == "x [] y"
    assert marks == (CitationMark("c1", 3),)


@pytest.mark.parametrize(
    ("raw", "expected_text", "expected_position"),
    [
        ("Paris [c1].", "Paris.", 5),
        ("Paris [c1]", "Paris", 5),
        ("Paris [c1], Rome", "Paris, Rome", 5),
        ("(in Paris [c1])", "(in Paris)", 9),
        ("a [c1] b", "a b", 1),
        ("a [c1]b", "a b", 1),
        ("a[c1] b", "a b", 1),
        ("a[c1]b", "ab", 1),
        ("Paris [c1]\nRome", "Paris\nRome", 5),
        ("two  [c1].", "two .", 4),
        ("Paris [c1] [c2].", "Paris.", 5),
        ("Paris [c1][c2] is", "Paris is", 5),
        ("Paris [c1] [see]", "Paris [see]", 5),
    ],
)
def test_space_before_marker(raw: str, expected_text: str, expected_position: int) -> None:
    text, marks = extract_citations(raw)
    assert text == expected_text
    assert marks
    assert {mark.position for mark in marks} == {expected_position}


def test_persian_text_with_markers() -> None:
    raw = "پاریس پایتخت فرانسه است [c1]. جمعیت آن زیاد است [c2، c3]؟ برج ایفل [C۴] معروف است."
    text, marks = extract_citations(raw)
    assert text == "پاریس پایتخت فرانسه است. جمعیت آن زیاد است؟ برج ایفل معروف است."
    assert aliases(marks) == ["c1", "c2", "c3", "c4"]
    assert marks[0].position == text.index(".")
    assert marks[1].position == marks[2].position == text.index("؟")
    assert marks[3].position == text.index("ایفل") + len("ایفل")
    assert sentences_without_citation(text=text, marks=marks) == 0


def test_marker_split_at_every_position() -> None:
    raw = "Paris is big [c1, C3]. Rome[c2] is old [ c4 ;c5 ]"
    expected = extract_citations(raw)
    assert expected[0] == "Paris is big. Rome is old"
    assert aliases(expected[1]) == ["c1", "c3", "c2", "c4", "c5"]
    for i in range(len(raw) + 1):
        text, marks = stream([raw[:i], raw[i:]])
        assert (text, tuple(marks)) == expected, i
        for j in range(i, len(raw) + 1):
            text, marks = stream([raw[:i], raw[i:j], raw[j:]])
            assert (text, tuple(marks)) == expected, (i, j)
    assert stream(list(raw)) == (expected[0], list(expected[1]))


def test_mark_is_emitted_as_soon_as_marker_closes() -> None:
    extractor = CitationExtractor()
    assert extractor.feed("Paris [c1") == [TextPiece("Paris")]
    assert extractor.feed("]") == [CitationMark("c1", 5)]
    assert extractor.feed(". Next") == [TextPiece(". Next")]
    assert extractor.close() == []


def test_non_marker_bracket_is_released_as_soon_as_known() -> None:
    extractor = CitationExtractor()
    assert extractor.feed("[") == []
    assert extractor.feed("s") == [TextPiece("[s")]
    assert extractor.feed("[1") == [TextPiece("[1")]
    assert extractor.feed("[c2") == []
    assert extractor.feed("x") == [TextPiece("[c2x")]
    assert extractor.feed("[") == []
    assert extractor.feed("[") == [TextPiece("[")]
    assert extractor.close() == [TextPiece("[")]
    assert extractor.text == "[s[1[c2x[["


def test_unclosed_bracket_at_end_of_stream_is_plain_text() -> None:
    extractor = CitationExtractor()
    assert extractor.feed("see [c1, c2") == [TextPiece("see")]
    assert extractor.close() == [TextPiece(" [c1, c2")]
    assert extractor.text == "see [c1, c2"
    assert extractor.marks == ()
    assert extractor.close() == []
    with pytest.raises(RuntimeError):
        extractor.feed("more")


def test_long_bracket_run_is_released_after_max_hold() -> None:
    raw = "[c1" + ", c1" * 20 + "]"
    extractor = CitationExtractor()
    assert extractor.feed(raw[:48]) == []
    assert extractor.feed(raw[48]) == [TextPiece(raw[:49])]
    extractor.feed(raw[49:])
    extractor.close()
    assert (extractor.text, extractor.marks) == (raw, ())
    spaces = "[" + " " * 60 + "c1]"
    assert extract_citations(spaces) == (spaces, ())


def test_max_hold_bounds_marker_length() -> None:
    # With max_hold=8 at most 8 characters are held, so a 9-character marker still
    # closes on its ninth, but a 10-character one is released first.
    assert aliases(stream(["x[c1, c22]"], max_hold=8)[1]) == ["c1", "c22"]
    assert stream(["x[c1, c222]"], max_hold=8) == ("x[c1, c222]", [])
    with pytest.raises(ValueError, match="max_hold"):
        CitationExtractor(max_hold=2)


def test_validate_partitions_by_allowed_alias() -> None:
    marks = [CitationMark("c1", 0), CitationMark("c9", 3), CitationMark("c2", 5)]
    result = citations_validate(marks=marks, allowed_aliases={"C1", "c2", "c3"})
    assert result.valid == (marks[0], marks[2])
    assert result.dropped == (marks[1],)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Paris is big [c1]. Rome is old.", 1),
        ("Paris is big.[c1] Rome is old.", 1),
        ("Paris is big. Rome [c1] is old.", 1),
        ("Paris is big [c1]. Rome is old [c2].", 0),
        ("Paris is big. Rome is old.", 2),
        ("Is it big? Yes! Very [c1].", 2),
        ("Pi is 3.14 [c1] roughly.", 0),
        ("- one [c1]\n- two\n- three [c2]", 1),
        ("## Heading\n\nBody text [c1].", 0),
        ("| a | b |\n|---|---|\n| x [c1] | y |", 1),
        # A quoted code block is cited once, by its intro; its lines are not claims.
        ("An example [c1]:\n\n```\nserver {\n  listen 80;\n}\n```", 0),
        ("```\n$ tar -cvJf a.tar.xz ./source\n```\n[c1]", 0),
        ("", 0),
        ("پاریس بزرگ است [c1]. رم قدیمی است؟ برلین سرد است [c2]!", 1),
    ],
)
def test_sentences_without_citation(raw: str, expected: int) -> None:
    text, marks = extract_citations(raw)
    assert sentences_without_citation(text=text, marks=marks) == expected


def test_mark_at_boundary_belongs_to_preceding_sentence() -> None:
    text = "One. Two."
    assert sentences_without_citation(text=text, marks=[CitationMark("c1", 4)]) == 1
    assert sentences_without_citation(text=text, marks=[CitationMark("c1", 5)]) == 1
    # A mark past the end still counts for the last sentence.
    assert sentences_without_citation(text=text, marks=[CitationMark("c1", 99)]) == 1
    assert sentences_without_citation(text=text, marks=[]) == 2


# Property tests -------------------------------------------------------------

_MARKER_RE = re.compile(r"\[[ \t]*[cC]\d+(?:[ \t]*[,;،؛][ \t]*[cC]\d+)*[ \t]*\]")


def _reference(text: str, max_hold: int) -> tuple[str, list[str], int]:
    """A whole-text regex model: text with markers removed, aliases, marker count."""
    found: list[str] = []
    count = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal count
        if len(match.group()) > max_hold + 1:
            return match.group()
        count += 1
        names = [f"c{int(n)}" for n in re.findall(r"\d+", match.group())]
        found.extend(dict.fromkeys(names))
        return ""

    return _MARKER_RE.sub(replace, text), found, count


_spaces = st.text(alphabet=" \t", max_size=2)
_alias = st.builds(
    lambda prefix, number, digits: prefix + str(number).translate(digits),
    st.sampled_from("cC"),
    st.integers(0, 120),
    st.sampled_from([{}, str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")]),
)


@st.composite
def _markers(draw: st.DrawFn) -> str:
    names = draw(st.lists(_alias, min_size=1, max_size=4))
    body = names[0]
    for name in names[1:]:
        body += draw(_spaces) + draw(st.sampled_from(",;،")) + draw(_spaces) + name
    return "[" + draw(_spaces) + body + draw(_spaces) + "]"


_tokens = st.one_of(
    st.sampled_from(["Paris", "is", "big", "c1", "C2", "3.14", "پاریس", "است", "c", "12"]),
    st.sampled_from([" ", " ", " ", "  ", "\n", ".", ",", ";", "!", "?", "؟", "،", ")"]),
    _markers(),
    st.sampled_from(["[", "]", "[[", "[see above]", "[1]", "[c", "[c1", "[c1,", "[ ", "["]),
    st.builds(lambda n: "[c1" + ", c2" * n, st.integers(8, 14)),
)
_texts = st.lists(_tokens, max_size=30).map("".join)


@st.composite
def _splits(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in pairwise(bounds)]


@settings(max_examples=300, deadline=None)
@given(data=st.data(), text=_texts, max_hold=st.sampled_from([4, 12, 48]))
def test_any_split_matches_whole_stream(data: st.DataObject, text: str, max_hold: int) -> None:
    whole = stream([text], max_hold=max_hold)
    chunks = data.draw(_splits(text))
    assert "".join(chunks) == text
    assert stream(chunks, max_hold=max_hold) == whole
    assert stream(list(text), max_hold=max_hold) == whole


@settings(max_examples=300, deadline=None)
@given(text=_texts, max_hold=st.sampled_from([4, 12, 48]))
def test_stream_agrees_with_regex_model(text: str, max_hold: int) -> None:
    cleaned, marks = stream([text], max_hold=max_hold)
    expected, expected_aliases, marker_count = _reference(text, max_hold)
    # The extractor only ever removes markers and at most one space per marker.
    assert cleaned.replace(" ", "") == expected.replace(" ", "")
    assert 0 <= len(expected) - len(cleaned) <= marker_count
    assert aliases(marks) == expected_aliases
    positions = [mark.position for mark in marks]
    assert positions == sorted(positions)
    assert all(0 <= p <= len(cleaned) for p in positions)


_marks = st.lists(st.builds(CitationMark, _alias.map(str.lower), st.integers(0, 50)), max_size=12)


@settings(max_examples=150, deadline=None)
@given(marks=_marks, allowed=st.sets(_alias, max_size=6))
def test_validate_is_an_order_preserving_partition(
    marks: list[CitationMark], allowed: set[str]
) -> None:
    result = citations_validate(marks=marks, allowed_aliases=allowed)
    lowered = {alias.lower() for alias in allowed}
    assert all(mark.alias in lowered for mark in result.valid)
    assert all(mark.alias not in lowered for mark in result.dropped)
    assert len(result.valid) + len(result.dropped) == len(marks)
    assert list(result.valid) == [mark for mark in marks if mark in result.valid]
    assert list(result.dropped) == [mark for mark in marks if mark in result.dropped]
