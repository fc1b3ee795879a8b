"""Helpers every parser uses to turn extracted text into `Block`s."""

from __future__ import annotations

import re
import textwrap

from .types import CODE, TEXT, Block

HEADING_SEPARATOR = " > "
# A line typed at a shell prompt ("$ tar ...", "# apt-get ...", "% make"): a command, as is.
# Not a Markdown heading printed as text ("# The Configuration Stanza"): a command after a root
# prompt opens with a command's name in lower case, a heading with a capital and up to five
# plain words. A longer such line is a configuration's comment ("# The following lines are
# desirable for IPv6 capable hosts" in a hosts file), which goes with its configuration.
PROMPT = re.compile(r"^\s*(?:[$%]\s+\S|#\s+(?![A-Z][\w-]*(?:\s+[\w-]+){0,4}\s*$)\S)")


def code_lines(text: str) -> str:
    """A code block's text with its lines and their indentation kept (commands and
    configuration read wrong once their lines are joined): tabs expanded, trailing spaces
    and the blank lines around it dropped, the indentation all its lines share removed."""
    lines = [line.rstrip() for line in text.expandtabs(8).replace("\r\n", "\n").split("\n")]
    return textwrap.dedent("\n".join(lines)).strip("\n")


def collapse_whitespace(text: str) -> str:
    # str.split() splits on Unicode whitespace only, so ZWNJ (U+200C) and other
    # joiners that Persian words depend on survive untouched.
    return " ".join(text.split())


class BlockCollector:
    """Accumulates blocks in reading order while tracking the heading path.

    Levels follow HTML: 1 is an H1. DOCX "Title" uses level 0 so that a Title
    followed by "Heading 1" reads like a Markdown H1 followed by an H2.
    """

    def __init__(self) -> None:
        self._path: list[tuple[int, str]] = []
        self._blocks: list[Block] = []
        self.headings: list[tuple[int, str]] = []

    def heading(self, level: int, text: str) -> None:
        text = collapse_whitespace(text)
        if not text:
            return
        while self._path and self._path[-1][0] >= level:
            self._path.pop()
        self._path.append((level, text))
        self.headings.append((level, text))

    def add(
        self,
        text: str,
        *,
        page: int | None = None,
        kind: str = TEXT,
        ocr_confidence: float | None = None,
    ) -> None:
        text = collapse_whitespace(text)
        if text:
            heading = self.current_heading
            self._blocks.append(Block(text, page, heading, kind, ocr_confidence))

    def add_code(
        self, text: str, *, page: int | None = None, ocr_confidence: float | None = None
    ) -> None:
        text = code_lines(text)
        if text.strip():
            heading = self.current_heading
            self._blocks.append(Block(text, page, heading, CODE, ocr_confidence))

    def add_paragraph(
        self, text: str, *, code: bool, page: int | None, ocr_confidence: float | None = None
    ) -> None:
        """One of `paragraphs.page_blocks`' paragraphs: a command keeps its lines."""
        if code:
            self.add_code(text, page=page, ocr_confidence=ocr_confidence)
        else:
            self.add(text, page=page, ocr_confidence=ocr_confidence)

    @property
    def current_heading(self) -> str | None:
        if not self._path:
            return None
        return HEADING_SEPARATOR.join(text for _, text in self._path)

    @property
    def blocks(self) -> tuple[Block, ...]:
        return tuple(self._blocks)

    def first_heading(self, *, level: int | None = None) -> str | None:
        for heading_level, text in self.headings:
            if level is None or heading_level == level:
                return text
        return None
