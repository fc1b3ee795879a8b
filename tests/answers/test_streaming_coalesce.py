import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.answers.streaming.coalesce import Coalescer

BOUNDARY_ENDS = (". ", "! ", "? ", "؟ ", "; ", ": ", ", ", "، ", "\n")


def feed_all(coalescer: Coalescer, tokens: list[str]) -> list[str]:
    pieces: list[str] = []
    for token in tokens:
        pieces += coalescer.feed(token)
    return pieces


def test_holds_until_min_chars() -> None:
    coalescer = Coalescer(min_chars=20, max_chars=100)
    assert feed_all(coalescer, ["Hi", ". ", "How", " are", " you"]) == []
    assert coalescer.flush() == ["Hi. How are you"]
    assert coalescer.flush() == []


def test_flushes_at_last_boundary_once_min_reached() -> None:
    coalescer = Coalescer(min_chars=20, max_chars=100)
    tokens = ["One, ", "two. ", "Three ", "four; ", "five", " six"]
    # "One, two. Three four; " is 22 chars: the cut is at the last boundary, "; ".
    assert feed_all(coalescer, tokens[:4]) == ["One, two. Three four; "]
    assert feed_all(coalescer, tokens[4:]) == []
    assert coalescer.flush() == ["five six"]


def test_cut_uses_last_boundary_in_the_buffer() -> None:
    coalescer = Coalescer(min_chars=10, max_chars=100)
    text = "Alpha beta. Gamma delta, epsilon zeta"
    assert coalescer.feed(text) == ["Alpha beta. Gamma delta, "]
    assert coalescer.flush() == ["epsilon zeta"]


def test_punctuation_without_following_space_is_not_a_boundary() -> None:
    coalescer = Coalescer(min_chars=5, max_chars=100)
    assert coalescer.feed("Pi is 3.14,2.71 and e") == []
    assert coalescer.feed(".") == []
    assert coalescer.feed(" ") == ["Pi is 3.14,2.71 and e. "]


def test_newline_is_a_boundary() -> None:
    coalescer = Coalescer(min_chars=5, max_chars=100)
    assert coalescer.feed("- first item\n- second") == ["- first item\n"]
    assert coalescer.flush() == ["- second"]


def test_persian_boundaries() -> None:
    coalescer = Coalescer(min_chars=10, max_chars=100)
    assert coalescer.feed("پاریس بزرگ است، رم قدیمی") == ["پاریس بزرگ است، "]
    assert coalescer.feed(" است؟ برلین") == ["رم قدیمی است؟ "]
    assert coalescer.flush() == ["برلین"]


def test_forced_flush_at_last_whitespace() -> None:
    coalescer = Coalescer(min_chars=5, max_chars=20)
    words = ["word"] * 10
    pieces = feed_all(coalescer, [w + " " for w in words])
    assert pieces
    assert all(piece == "word word word word " for piece in pieces)
    assert "".join(pieces + coalescer.flush()) == "word " * 10


def test_forced_hard_cut_without_whitespace() -> None:
    coalescer = Coalescer(min_chars=5, max_chars=20)
    assert coalescer.feed("x" * 19) == []
    assert coalescer.feed("x") == ["x" * 20]
    assert coalescer.feed("y" * 45) == ["y" * 20, "y" * 20]
    assert coalescer.flush() == ["y" * 5]


def test_large_input_is_split_at_boundaries_within_max() -> None:
    sentence = "This is a sentence of some length. "
    coalescer = Coalescer(min_chars=10, max_chars=80)
    pieces = coalescer.feed(sentence * 6)
    assert pieces == [sentence * 2] * 3
    assert coalescer.flush() == []


@pytest.mark.parametrize(("min_chars", "max_chars"), [(10, 0), (-1, 10), (11, 10)])
def test_rejects_bad_limits(min_chars: int, max_chars: int) -> None:
    with pytest.raises(ValueError):
        Coalescer(min_chars=min_chars, max_chars=max_chars)


_tokens = st.lists(
    st.one_of(
        st.text(alphabet="ab پا.,;:!?؟،\n", max_size=6),
        st.sampled_from(["word ", "3.14", "end. ", "\n", "، ", "x" * 30]),
        st.text(alphabet="z", min_size=50, max_size=300),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(
    tokens=_tokens,
    min_chars=st.integers(0, 80),
    extra=st.integers(0, 200),
)
def test_pieces_preserve_text_and_respect_max(
    tokens: list[str], min_chars: int, extra: int
) -> None:
    max_chars = max(1, min_chars + extra)
    coalescer = Coalescer(min_chars=min_chars, max_chars=max_chars)
    fed = feed_all(coalescer, tokens)
    flushed = coalescer.flush()
    pieces = fed + flushed
    assert "".join(pieces) == "".join(tokens)
    assert all(0 < len(piece) <= max_chars for piece in pieces)
    assert len(flushed) <= 1
    # A piece sent before the end stops where a reader pauses, or is a forced cut.
    for piece in fed:
        assert piece.endswith(BOUNDARY_ENDS) or piece[-1].isspace() or len(piece) == max_chars
