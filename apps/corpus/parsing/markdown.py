"""Markdown via markdown-it-py's token stream (CommonMark plus tables).

Headings (ATX and setext) build the heading path; paragraphs, list items,
table rows become blocks with inline markup stripped; a code block keeps its lines. A block says what it
was (bulleted item, numbered step, table row), so the chunk keeps the list a list.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .blocks import BlockCollector
from .decode import decode_text
from .html import html_fragment_text
from .types import HEAD_ROW, ITEM, ROW, STEP, TEXT, Extracted

# YAML (---) front matter; TOML-style closers (...) are accepted as YAML allows.
FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n.*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
CELL_SEPARATOR = " | "
INLINE_BREAKS = frozenset({"softbreak", "hardbreak"})
INLINE_LITERALS = frozenset({"text", "code_inline"})


def parse_markdown(data: bytes) -> Extracted:
    source = FRONT_MATTER.sub("", decode_text(data), count=1)
    tokens = _parser().parse(source)
    collector = BlockCollector()
    _collect(tokens, collector)
    return Extracted(title=collector.first_heading(level=1), blocks=collector.blocks)


def _parser() -> MarkdownIt:
    # A fresh instance each time: MarkdownIt is cheap and not documented thread-safe.
    return MarkdownIt("commonmark").enable("table")


_LIST_KINDS = {"bullet_list_open": ITEM, "ordered_list_open": STEP}
_LIST_CLOSES = frozenset({"bullet_list_close", "ordered_list_close"})


def _collect(tokens: Sequence[Token], collector: BlockCollector) -> None:
    stream = iter(tokens)
    lists: list[str] = []  # the kinds of the lists the current token sits in
    row_kind = ROW
    for token in stream:
        if token.type in _LIST_KINDS:
            lists.append(_LIST_KINDS[token.type])
        elif token.type in _LIST_CLOSES:
            lists.pop()
        elif token.type in ("thead_open", "tbody_open"):
            row_kind = HEAD_ROW if token.type == "thead_open" else ROW
        elif token.type == "heading_open":
            collector.heading(int(token.tag[1]), inline_text(next(stream)))
        elif token.type == "paragraph_open":
            collector.add(inline_text(next(stream)), kind=lists[-1] if lists else TEXT)
        elif token.type == "tr_open":
            collector.add(_row_text(stream), kind=row_kind)
        elif token.type in ("fence", "code_block"):
            collector.add_code(token.content)
        elif token.type == "html_block":
            collector.add(html_fragment_text(token.content))


def _row_text(stream: Iterator[Token]) -> str:
    cells: list[str] = []
    for token in stream:
        if token.type == "tr_close":
            break
        if token.type == "inline":
            cells.append(inline_text(token))
    return CELL_SEPARATOR.join(cell.strip() for cell in cells if cell.strip())


def inline_text(token: Token) -> str:
    """Text of an inline token: emphasis and links dropped, image alt text kept."""
    return "".join(_inline_pieces(token.children or []))


def _inline_pieces(children: Sequence[Token]) -> Iterator[str]:
    for child in children:
        if child.type in INLINE_LITERALS:
            yield child.content
        elif child.type in INLINE_BREAKS:
            yield " "
        elif child.type == "image":
            yield from _inline_pieces(child.children or [])
