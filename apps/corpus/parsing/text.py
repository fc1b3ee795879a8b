"""Plain text: one block per paragraph, paragraphs separated by blank lines."""

from __future__ import annotations

import re

from .blocks import BlockCollector
from .decode import decode_text
from .types import Extracted

BLANK_LINE = re.compile(r"\n[ \t\f\v]*\n")


def split_paragraphs(text: str) -> list[str]:
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    return BLANK_LINE.split(normalised)


def parse_text(data: bytes) -> Extracted:
    collector = BlockCollector()
    for paragraph in split_paragraphs(decode_text(data)):
        collector.add(paragraph)
    return Extracted(title=None, blocks=collector.blocks)
