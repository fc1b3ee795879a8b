"""Chunks keep the source's lists, steps, tables and code on lines of their own."""

from __future__ import annotations

import hashlib

from apps.corpus.ingestion.chunking import CHUNKER_VERSION, chunk_blocks
from apps.corpus.parsing import Block
from apps.corpus.parsing.markdown import parse_markdown

GUIDE = b"""# Guide

## Formats

The platform can ingest these kinds of documents:

- PDF files (.pdf)
- Word documents (.docx)

A file with any other ending is refused.

## Checking

1. Open the document list.
2. Read the message.

## Statuses

| Status | Meaning |
|---|---|
| pending | Waiting for a worker. |
| failed | Ingestion stopped. |

## Command

Run this:

```
python manage.py ingest PATH
```
"""


def chunk_texts() -> dict[str, str]:
    parsed = parse_markdown(GUIDE)
    return {c.heading: c.text for c in chunk_blocks(title="Guide", blocks=parsed.blocks)}


def test_the_markdown_parser_says_what_each_block_is() -> None:
    kinds = [(b.kind, b.text) for b in parse_markdown(GUIDE).blocks]

    assert ("item", "PDF files (.pdf)") in kinds
    assert ("step", "Open the document list.") in kinds
    assert ("head_row", "Status | Meaning") in kinds
    assert ("row", "failed | Ingestion stopped.") in kinds
    assert ("code", "python manage.py ingest PATH") in kinds


def test_list_items_and_the_paragraph_after_them_start_lines() -> None:
    assert chunk_texts()["Guide > Formats"] == (
        "The platform can ingest these kinds of documents:\n- PDF files (.pdf)\n"
        "- Word documents (.docx)\nA file with any other ending is refused."
    )


def test_steps_are_numbered_and_rows_keep_their_cells() -> None:
    texts = chunk_texts()

    assert texts["Guide > Checking"] == "1. Open the document list.\n2. Read the message."
    assert texts["Guide > Statuses"] == (
        "| Status | Meaning |\n|---|---|\n| pending | Waiting for a worker. |\n"
        "| failed | Ingestion stopped. |"
    )
    assert texts["Guide > Command"] == "Run this:\n`python manage.py ingest PATH`"


def test_plain_paragraphs_read_and_hash_as_before() -> None:
    blocks = [
        Block(text="First paragraph. It has two sentences.", page=None, heading="Intro"),
        Block(text="Second paragraph.", page=None, heading="Intro"),
    ]

    [draft] = chunk_blocks(title="Doc", blocks=blocks)

    assert draft.text == "First paragraph. It has two sentences. Second paragraph."
    expected = hashlib.sha256(f"{CHUNKER_VERSION}\nDoc — Intro\n{draft.text}".encode())
    assert draft.content_hash == expected.hexdigest()
