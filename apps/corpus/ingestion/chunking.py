"""Sentence-respecting, word-budgeted chunking with overlap.

Chunks never cross a heading or page boundary (a citation can then name one page and
one section), never cut a sentence unless a single sentence exceeds the budget, and
carry the last sentences of the previous chunk as overlap.

Lists and tables stay readable in the chunk text: a bulleted item starts a line with
"- ", a numbered step with "1. ", a table row is one "| a | b |" line (its header row
followed by "|---|"), and a paragraph after them starts a line of its own. A chunk of
plain paragraphs reads exactly as before (same text, same content hash, no re-embedding).

A code block (a command, a configuration file) is one unit written as a fenced Markdown
block, its lines and indentation as the source has them: it is never cut between chunks. A
block longer than the budget is a chunk of its own, cut at line boundaries only when it must
be, each piece fenced again.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from apps.corpus.parsing import Block
from apps.corpus.parsing.types import BLOCK_SEPARATOR, CODE, HEAD_ROW, ITEM, ROW, STEP, TEXT
from apps.corpus.text import (
    detect_language,
    estimate_tokens,
    fenced,
    normalise_text,
    sentence_spans,
    words,
)

CHUNKER_VERSION = "1"


@dataclass(frozen=True)
class ChunkDraft:
    index: int
    text: str
    heading: str
    page: int | None
    char_start: int
    char_end: int
    token_count: int
    language: str
    embed_text: str  # what the embedder sees: title and heading give the passage its context
    content_hash: str
    ocr_confidence: float | None = None  # the page's, when it was read by OCR


@dataclass(frozen=True)
class _Sentence:
    text: str
    start: int
    end: int
    words: int
    line: str | None = None  # starts a new line with this lead ("- ", "2. ", "| "); None: inline
    code: str | None = None  # a code block's lines, unfenced: cut at line boundaries only


@dataclass(frozen=True)
class _Section:
    heading: str
    page: int | None
    sentences: tuple[_Sentence, ...]
    ocr_confidence: float | None = None


def chunk_blocks(
    *, title: str, blocks: Sequence[Block], max_words: int = 140, overlap_words: int = 25
) -> list[ChunkDraft]:
    drafts: list[ChunkDraft] = []
    for section in _sections(blocks):
        header = _table_header(section)
        for group in _pack(section.sentences, max_words=max_words, overlap_words=overlap_words):
            if header is not None and header not in group:
                group = [header, *group]  # A table's later chunks repeat its header row.
            drafts.append(_draft(len(drafts), title, section, group))
    return drafts


def _table_header(section: _Section) -> _Sentence | None:
    """The header row a section opens with (a sheet, a table under its own heading)."""
    first = section.sentences[0] if section.sentences else None
    return first if first is not None and first.line == "| " and "\n|---" in first.text else None


def _sections(blocks: Sequence[Block]) -> Iterator[_Section]:
    """Group consecutive blocks with the same heading and page; offsets index the joined text."""
    offset = 0
    current: list[_Sentence] = []
    key: tuple[str, int | None] | None = None
    previous, step = TEXT, 0
    confidence: float | None = None  # sections never cross a page, so one page's confidence
    for block in blocks:
        text = _code_text(block.text) if block.kind == CODE else normalise_text(block.text)
        if not text:
            continue
        block_key = (block.heading or "", block.page)
        if key is not None and block_key != key and current:
            yield _Section(key[0], key[1], tuple(current), confidence)
            current, previous = [], TEXT
        key, confidence = block_key, block.ocr_confidence
        step = step + 1 if block.kind == STEP and previous == STEP else 1
        current.extend(_block_sentences(text, offset, block.kind, previous, step))
        offset += len(text) + len(BLOCK_SEPARATOR)
        previous = block.kind
    if key is not None and current:
        yield _Section(key[0], key[1], tuple(current), confidence)


def _block_sentences(
    text: str, offset: int, kind: str, previous: str, step: int
) -> list[_Sentence]:
    """The block's sentences, the first one leading its line when the block is structured."""
    if kind == CODE:  # a command or a configuration: one unit, never merged into prose
        return [_code_sentence(text, offset)]
    if kind in (ROW, HEAD_ROW):
        rule = "\n|" + "---|" * (text.count(" | ") + 1) if kind == HEAD_ROW else ""
        row = f"{text} |{rule}"
        return [_Sentence(row, offset, offset + len(text), len(words(text)), line="| ")]
    sentences = list(_sentences(text, offset))
    lead = {ITEM: "- ", STEP: f"{step}. "}.get(kind, "" if previous != TEXT else None)
    if sentences and lead is not None:
        sentences[0] = replace(sentences[0], line=lead)
    return sentences


def _code_text(text: str) -> str:
    """Code as the source wrote it: Unicode composed, the indentation kept (normalise_text
    collapses spaces, which would flatten a configuration's nesting)."""
    lines = unicodedata.normalize("NFC", text).split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def _code_sentence(code: str, start: int) -> _Sentence:
    return _Sentence(fenced(code), start, start + len(code), len(words(code)), line="", code=code)


def _sentences(text: str, offset: int) -> Iterator[_Sentence]:
    for start, end in sentence_spans(text):
        sentence = text[start:end].rstrip()
        yield _Sentence(
            sentence, offset + start, offset + start + len(sentence), len(words(sentence))
        )


def _pack(
    sentences: Sequence[_Sentence], *, max_words: int, overlap_words: int
) -> Iterator[list[_Sentence]]:
    group: list[_Sentence] = []
    size = 0
    fresh = 0  # sentences in the group that are not overlap from the previous chunk
    for sentence in _split_long(sentences, max_words):
        if group and size + sentence.words > max_words and fresh:
            yield group
            group = _overlap(group, overlap_words, room=max_words - sentence.words)
            size = sum(s.words for s in group)
            fresh = 0
        group.append(sentence)
        size += sentence.words
        fresh += 1
    if group and fresh:
        yield group


def _overlap(group: list[_Sentence], overlap_words: int, *, room: int) -> list[_Sentence]:
    tail: list[_Sentence] = []
    size = 0
    for sentence in reversed(group):
        if size + sentence.words > min(overlap_words, room):
            break
        tail.insert(0, sentence)
        size += sentence.words
    return tail


def _split_long(sentences: Sequence[_Sentence], max_words: int) -> Iterator[_Sentence]:
    """A sentence longer than the budget (tables, lists without stops) is cut at word bounds."""
    for sentence in sentences:
        if sentence.words <= max_words:
            yield sentence
            continue
        if sentence.code is not None:
            yield from _split_code(sentence.code, sentence.start, max_words)
            continue
        tokens = sentence.text.split(" ")
        cursor = sentence.start
        for i in range(0, len(tokens), max_words):
            piece = " ".join(tokens[i : i + max_words])
            line = sentence.line if i == 0 else None
            yield _Sentence(piece, cursor, cursor + len(piece), len(words(piece)), line)
            cursor += len(piece) + 1


def _split_code(code: str, start: int, max_words: int) -> Iterator[_Sentence]:
    """A block over the budget, cut at line boundaries: as many whole lines as fit."""
    piece: list[str] = []
    size = 0
    cursor = start
    for line in code.split("\n"):
        count = len(words(line))
        if piece and size + count > max_words:
            text = "\n".join(piece)
            yield _code_sentence(text, cursor)
            cursor += len(text) + 1
            piece, size = [], 0
        piece.append(line)
        size += count
    if piece:
        yield _code_sentence("\n".join(piece), cursor)


def _joined(group: Sequence[_Sentence]) -> str:
    parts: list[str] = []
    for s in group:
        if s.line is None:
            parts.append(f" {s.text}" if parts else s.text)
        else:
            parts.append(f"\n{s.line}{s.text}" if parts else f"{s.line}{s.text}")
    return "".join(parts)


def _draft(index: int, title: str, section: _Section, group: list[_Sentence]) -> ChunkDraft:
    text = _joined(group)
    context = " — ".join(
        part for part in (title, _heading_below_title(section.heading, title)) if part
    )
    embed_text = f"{context}\n{text}" if context else text
    digest = hashlib.sha256(f"{CHUNKER_VERSION}\n{embed_text}".encode()).hexdigest()
    return ChunkDraft(
        index=index,
        text=text,
        heading=section.heading,
        page=section.page,
        char_start=group[0].start,
        char_end=group[-1].end,
        token_count=estimate_tokens(text),
        language=detect_language(text),
        embed_text=embed_text,
        content_hash=digest,
        ocr_confidence=section.ocr_confidence,
    )


def _heading_below_title(heading: str, title: str) -> str:
    """The heading path without a leading H1 that repeats the title ("Guide > Setup" -> "Setup")."""
    if heading == title:
        return ""
    prefix = f"{title} > "
    return heading[len(prefix) :] if heading.startswith(prefix) else heading
