"""A marker inside a source's text is not a citation: quoted escaped, it comes back literally."""

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.answers.streaming.citations import (
    MAX_HOLD,
    CitationExtractor,
    CitationMark,
    StreamItem,
    TextPiece,
    escape_markers,
    extract_citations,
)


def stream(chunks: list[str]) -> tuple[str, list[CitationMark]]:
    extractor = CitationExtractor()
    items: list[StreamItem] = []
    for chunk in chunks:
        items += extractor.feed(chunk)
    items += extractor.close()
    text = "".join(item.text for item in items if isinstance(item, TextPiece))
    return text, [item for item in items if isinstance(item, CitationMark)]


@pytest.mark.parametrize(
    "source",
    [
        "See footnote [c1] for details.",
        "Both [c1, c2] and [C3] are labels in the form.",
        "A doubled [[c1]] bracket.",
        "An escaped-looking \\[c1] and a path C:\\temp\\[c2].",
        "Ends in a backslash \\",
        "LaTeX keeps its \\[ x^2 \\] display math.",
        "یادداشت [c۱] در متن.",
    ],
)
def test_literal_markers_survive_quoting(source: str) -> None:
    assert extract_citations(escape_markers(source)) == (source, ())


def test_real_citation_after_a_literal_one_is_still_extracted() -> None:
    answer = f"The form names {escape_markers('box [c1]')} as optional [c2]."
    text, marks = extract_citations(answer)
    assert text == "The form names box [c1] as optional."
    assert [m.alias for m in marks] == ["c2"]


def test_text_without_escapes_reads_as_before() -> None:
    assert extract_citations("C:\\new\\folder [c1].")[0] == "C:\\new\\folder."
    assert extract_citations("a \\ b")[0] == "a \\ b"


def test_marker_too_long_to_be_a_citation_is_not_escaped() -> None:
    long_marker = "[c1" + ", c2" * 20 + "]"
    assert len(long_marker) > MAX_HOLD + 1
    assert escape_markers(long_marker) == long_marker
    assert extract_citations(long_marker) == (long_marker, ())


# Property: source text, however marker-like, survives; real citations between it are found.

_source_tokens = st.one_of(
    st.sampled_from(["Paris", "is", "c1", "3.14", "پاریس", "C:", "x"]),
    st.sampled_from([" ", "  ", "\n", ".", ",", ";", "?", "؟", ")", "\\", "\\\\", "]"]),
    st.sampled_from(["[c1]", "[C2]", "[ c3 ]", "[c1,c2]", "[c۴]", "[", "[c", "[c1", "[1]"]),
    st.sampled_from(["\\[c1]", "[[c2]", "\\[", "\\]", "[see above]"]),
)
_sources = st.lists(_source_tokens, max_size=14).map("".join)


@st.composite
def _splits(draw: st.DrawFn, text: str) -> list[str]:
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    return [text[a:b] for a, b in pairwise([0, *cuts, len(text)])]


@settings(max_examples=300, deadline=None)
@given(data=st.data(), source=_sources)
def test_escaped_source_text_survives_any_split(data: st.DataObject, source: str) -> None:
    escaped = escape_markers(source)
    assert stream(data.draw(_splits(escaped))) == (source, [])


@settings(max_examples=300, deadline=None)
@given(data=st.data(), drawn=st.lists(_sources, min_size=1, max_size=4))
def test_real_citations_between_quoted_sources_are_extracted(
    data: st.DataObject, drawn: list[str]
) -> None:
    # How the extractive composer writes: quoted sentences, each followed by " [cN]".
    sources = [s.strip() for s in drawn if s.strip()] or ["x"]
    answer = " ".join(f"{escape_markers(s)} [c{n}]" for n, s in enumerate(sources, start=1))
    text, marks = stream(data.draw(_splits(answer)))
    assert [m.alias for m in marks] == [f"c{n}" for n in range(1, len(sources) + 1)]
    # Between one mark and the next stands exactly the next source; the space before a
    # marker may stay when the source ends in an unfinished bracket, as for model text.
    bounds = [0, *(m.position for m in marks)]
    for n, (start, end) in enumerate(pairwise(bounds)):
        expected = sources[n] if n == 0 else f" {sources[n]}"
        assert text[start:end] in (expected, f"{expected} ")
    assert text[bounds[-1] :] == ""
