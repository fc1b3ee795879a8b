"""Strip ``[c1]``-style citation markers from streamed model text.

The composer writes markers inline; the client must never see them as text, and
each one should become a citation event the moment it closes. Text arrives in
arbitrary chunks, so the extractor works one character at a time and only holds
back what it cannot decide yet: an unclosed ``[`` that could still become a
marker, and a single space that may turn out to sit before a marker. Because
every decision depends only on the characters seen, never on where a chunk
ended, any split of the input yields the same text and the same marks.

A marker that stands in a source's own text ("see note [c1]") is not a citation.
Composers quote source text through `escape_markers`, which puts a backslash before
every complete marker; the extractor turns an escaped marker back into the literal
text and makes no citation of it. A backslash before anything else (a path, LaTeX's
display-math bracket) is left as written, so model text without escapes reads exactly as before.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TypeAlias

from apps.corpus.text import sentence_spans


@dataclass(frozen=True)
class TextPiece:
    text: str


@dataclass(frozen=True)
class CitationMark:
    alias: str
    """Normalised: lower-case ``c`` plus the number in ASCII digits, e.g. ``"c3"``."""
    position: int
    """Offset in the cleaned text where the marker stood (before any space that preceded it)."""


StreamItem: TypeAlias = TextPiece | CitationMark


_SPACES = frozenset(" \t")
# Persian and Arabic text uses its own comma and semicolon between aliases too.
_SEPARATORS = frozenset(",;،؛")
_PREFIXES = frozenset("cC")
# A space before a marker is dropped when the next visible text starts with one of
# these ("Paris [c1]." -> "Paris."); before a word it is kept so words never merge.
_DROP_SPACE_BEFORE = frozenset(".,;:!?…)]}»،؛؟۔\n\t\r")
_PLAIN_RUN = re.compile(r"[^ \[\\]+")
_ESCAPE = "\\"
MAX_HOLD = 48  # the longest unclosed marker the extractor holds back before giving up on it
# What `_MarkerParser` accepts, as one pattern, for escaping source text.
_MARKER = re.compile(r"\[[ \t]*[cC]\d+(?:[ \t]*[,;،؛][ \t]*[cC]\d+)*[ \t]*\]")


class _State(Enum):
    OPEN = "open"  # after "[" (and optional spaces)
    PREFIX = "prefix"  # after "c"
    DIGITS = "digits"  # inside the number of an alias
    AFTER_ALIAS = "after_alias"  # after a complete alias (and optional spaces)
    SEPARATOR = "separator"  # after "," or ";"
    CLOSED = "closed"  # after the final "]"


class _Step(Enum):
    MORE = "more"
    CLOSED = "closed"
    REJECTED = "rejected"


class _MarkerParser:
    """Recognises one marker, a character at a time, from just after its ``[``."""

    def __init__(self, *, escaped: bool = False) -> None:
        self.raw = "["
        self.escaped = escaped  # a backslash before it: literal source text, not a citation
        self.aliases: list[str] = []
        self._state = _State.OPEN
        self._digits = ""

    def step(self, ch: str) -> _Step:
        state = self._advance(ch)
        if state is None:
            return _Step.REJECTED
        self.raw += ch
        self._state = state
        return _Step.CLOSED if state is _State.CLOSED else _Step.MORE

    def _advance(self, ch: str) -> _State | None:
        state = self._state
        if ch.isdecimal() and state in (_State.PREFIX, _State.DIGITS):
            self._digits += ch
            return _State.DIGITS
        if state is _State.DIGITS:
            self._end_alias()
            state = _State.AFTER_ALIAS
        if ch in _SPACES:
            return state if state is not _State.PREFIX else None
        if ch in _PREFIXES:
            return _State.PREFIX if state in (_State.OPEN, _State.SEPARATOR) else None
        if ch in _SEPARATORS:
            return _State.SEPARATOR if state is _State.AFTER_ALIAS else None
        if ch == "]" and state is _State.AFTER_ALIAS:
            return _State.CLOSED
        return None

    def _end_alias(self) -> None:
        # int() also reads Persian and Arabic-Indic digits, so "c۳" becomes "c3".
        alias = f"c{int(self._digits)}"
        self._digits = ""
        if alias not in self.aliases:
            self.aliases.append(alias)


class _Space(Enum):
    NONE = "none"
    HELD = "held"  # a space that a "[" may follow
    BEFORE_MARKER = "before_marker"  # a space that preceded a marker; fate depends on what follows


class CitationExtractor:
    """Feed model text chunk by chunk; get cleaned text and citation marks back."""

    def __init__(self, *, max_hold: int = MAX_HOLD) -> None:
        if max_hold < 3:
            raise ValueError(f"max_hold must be at least 3 (the length of '[c1'), got {max_hold}")
        self._max_hold = max_hold
        self._parts: list[str] = []
        self._length = 0
        self._marks: list[CitationMark] = []
        self._marker: _MarkerParser | None = None
        self._space = _Space.NONE
        self._escape = False  # a backslash that a "[" may follow
        self._out: list[StreamItem] = []
        self._pending_text: list[str] = []
        self._closed = False

    @property
    def text(self) -> str:
        return "".join(self._parts)

    @property
    def marks(self) -> tuple[CitationMark, ...]:
        return tuple(self._marks)

    def feed(self, chunk: str) -> list[StreamItem]:
        if self._closed:
            raise RuntimeError("feed() called after close()")
        index = 0
        while index < len(chunk):
            index = self._consume(chunk, index)
        return self._take()

    def close(self) -> list[StreamItem]:
        if self._closed:
            return []
        self._closed = True
        if self._marker is not None:
            self._release_marker()
        if self._escape:
            self._escape = False
            self._emit_plain(_ESCAPE)
        if self._space is _Space.HELD:
            self._write(" ")
        # A space before a marker at the very end is dropped: "Paris [c1]" -> "Paris".
        self._space = _Space.NONE
        return self._take()

    def _consume(self, chunk: str, index: int) -> int:
        """Handle what starts at ``index``; return where to continue."""
        if self._marker is not None:
            return index + 1 if self._step_marker(chunk[index]) else index
        ch = chunk[index]
        if self._escape:
            self._escape = False
            if ch == "[":
                self._marker = _MarkerParser(escaped=True)
                return index + 1
            self._emit_plain(_ESCAPE)
            return index  # re-read: it may start a marker or another escape
        if ch == _ESCAPE:
            self._escape = True
            return index + 1
        if ch == "[":
            self._marker = _MarkerParser()
            return index + 1
        if ch == " ":
            self._hold_space()
            return index + 1
        run = _PLAIN_RUN.match(chunk, index)
        assert run is not None  # ch is neither " " nor "[" nor a backslash
        self._emit_plain(run.group())
        return run.end()

    def _step_marker(self, ch: str) -> bool:
        """Advance the open marker; False means ``ch`` was not consumed and must be re-read."""
        marker = self._marker
        assert marker is not None
        step = marker.step(ch)
        if step is _Step.CLOSED:
            self._marker = None
            if marker.escaped:
                self._emit_plain(marker.raw)
            else:
                self._add_marks(marker.aliases)
        elif step is _Step.REJECTED or len(marker.raw) > self._max_hold:
            self._release_marker()
        return step is not _Step.REJECTED

    def _release_marker(self) -> None:
        # A candidate holds exactly one "[" (its first character), so its text can go
        # out as-is; a rejecting "[" is re-read by the caller and may start a new one.
        assert self._marker is not None
        raw = self._marker.raw
        escaped = self._marker.escaped
        self._marker = None
        self._emit_plain(_ESCAPE + raw if escaped else raw)

    def _add_marks(self, aliases: Sequence[str]) -> None:
        if self._space is _Space.HELD:
            self._space = _Space.BEFORE_MARKER
        self._flush_text()
        for alias in aliases:
            mark = CitationMark(alias=alias, position=self._length)
            self._marks.append(mark)
            self._out.append(mark)

    def _hold_space(self) -> None:
        if self._space is _Space.HELD:
            self._write(" ")
        # A BEFORE_MARKER space is dropped here: "a [c1] b" -> "a b", not "a  b".
        self._space = _Space.HELD

    def _emit_plain(self, text: str) -> None:
        keep_space = self._space is _Space.HELD or (
            self._space is _Space.BEFORE_MARKER and text[0] not in _DROP_SPACE_BEFORE
        )
        self._space = _Space.NONE
        self._write(" " + text if keep_space else text)

    def _write(self, text: str) -> None:
        self._parts.append(text)
        self._pending_text.append(text)
        self._length += len(text)

    def _flush_text(self) -> None:
        if self._pending_text:
            self._out.append(TextPiece("".join(self._pending_text)))
            self._pending_text = []

    def _take(self) -> list[StreamItem]:
        self._flush_text()
        out, self._out = self._out, []
        return out


def escape_markers(text: str) -> str:
    """Source text as a composer quotes it: every complete marker in it escaped, so the
    extractor gives it back literally instead of taking it for a citation."""
    return _MARKER.sub(_escaped, text)


def _escaped(match: re.Match[str]) -> str:
    # The extractor gives up on a marker longer than its hold: that one stays text anyway.
    marker = match.group()
    return _ESCAPE + marker if len(marker) <= MAX_HOLD + 1 else marker


def extract_citations(text: str) -> tuple[str, tuple[CitationMark, ...]]:
    """Clean a whole text at once; same result as streaming it."""
    extractor = CitationExtractor()
    extractor.feed(text)
    extractor.close()
    return extractor.text, extractor.marks


@dataclass(frozen=True)
class ValidatedCitations:
    valid: tuple[CitationMark, ...]
    dropped: tuple[CitationMark, ...]
    """Marks whose alias was not among the retrieved passages (the model invented it)."""


def citations_validate(
    *, marks: Sequence[CitationMark], allowed_aliases: Collection[str]
) -> ValidatedCitations:
    allowed = {alias.strip().lower() for alias in allowed_aliases}
    valid = tuple(mark for mark in marks if mark.alias in allowed)
    dropped = tuple(mark for mark in marks if mark.alias not in allowed)
    return ValidatedCitations(valid=valid, dropped=dropped)


# The end of a turn reads one answer's sentences several times (its badge, the confidence
# inputs it stores, its count of uncited sentences): split once, character by character.
@functools.lru_cache(maxsize=32)
def _sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    # A model's answer may end a Persian sentence with "۔" or close a quote with "»".
    # Abbreviations are not looked up, so uncited-sentence counts stored with earlier
    # turns stay comparable.
    spans = sentence_spans(text, abbreviations=False, persian_marks=True)
    code = [match.span() for match in _FENCED.finditer(text)]
    return tuple(
        (start, end)
        for start, end in spans
        if _is_sentence(text[start:end]) and not any(a <= start < b for a, b in code)
    )


# A fenced code block quoted from a source: its lines are the source's, cited once by the
# sentence introducing it (or the marker after it), and are not claims of their own.
_FENCED = re.compile(r"^(`{3,})[^\n`]*\n.*?^\1`*[ \t]*$", re.MULTILINE | re.DOTALL)


def _is_sentence(span: str) -> bool:
    # Lines of only punctuation (table rules, bullets) and headings are not claims.
    stripped = span.strip()
    return any(ch.isalnum() for ch in stripped) and not stripped.startswith("#")


def uncited_share(*, text: str, marks: Sequence[CitationMark]) -> float:
    """The share of the sentences of ``text`` that no mark falls in (0 for no sentence)."""
    spans = _sentence_spans(text)
    return sentences_without_citation(text=text, marks=marks) / len(spans) if spans else 0.0


def sentences_without_citation(*, text: str, marks: Sequence[CitationMark]) -> int:
    """Count sentences of ``text`` (cleaned) that no mark falls in."""
    spans = _sentence_spans(text)
    if not spans:
        return 0
    ends = [end for _, end in spans]
    # The first sentence ending at or after p: a mark at a boundary (right after a
    # sentence's final punctuation) belongs to the sentence before it.
    cited = {min(bisect.bisect_left(ends, mark.position), len(spans) - 1) for mark in marks}
    return len(spans) - len(cited)
