"""A scan keeps its original's headings: a line printed larger than the body, or a Markdown
heading printed as text, heads the paragraphs after it (the heading path chunking cuts at and
retrieval weighs), and is no paragraph of its own. A path Tesseract splits at its dot is read
whole. Pages printed by Chromium, scanned by pdftoppm and read by the real Tesseract."""

from __future__ import annotations

import pytest

from apps.corpus.parsing import OcrOptions, parse_document
from apps.corpus.parsing.ocr_words import OcrWord
from apps.corpus.parsing.printed_headings import PrintedHeading, markdown_heading, printed_headings
from apps.corpus.parsing.types import CODE, Block
from tests.corpus import scans

OCR = OcrOptions(max_pages=2, page_timeout_s=60.0, dpi=200)
BODY = (
    "The target machine has no network connection, so the packages it needs are fetched "
    "by another machine and carried over on a removable disc. "
)
MANUAL = f"""<!doctype html><html><head><meta charset="utf-8"></head>
<body style="font-size:16px;font-family:serif">
<h1>Chapter 2. Offline upgrades</h1>
<p>{BODY * 2}</p>
<h2>2.1. Preparing the disc</h2>
<p>Format the disc with a filesystem both machines can read. {BODY}</p>
<p>The "<code>/etc/nsswitch.conf</code>" file decides the order of hostname lookups on both machines.</p>
<h2>2.2. Fetching the packages</h2>
<p>Run the fetch on the remote machine and bring the disc back. {BODY}</p>
</body></html>"""
MARKDOWN = """## Wire protocol

APT communicates with hooks via a UNIX domain socket in a file descriptor.
The byte stream holds JSON objects, each one terminated by an empty line.

### Hello handshake

APT performs a call to the hello method with the versions it supports.

# apt-get update
"""


@pytest.fixture(scope="module")
def manual() -> tuple[Block, ...]:
    scan = scans.scanned(scans.chromium_pdf(MANUAL))
    return parse_document(filename="offline.pdf", data=scan, ocr=OCR).blocks


@pytest.fixture(scope="module")
def markdown() -> tuple[Block, ...]:
    scan = scans.printed_text_scan(MARKDOWN)
    return parse_document(filename="hooks.pdf", data=scan, ocr=OCR).blocks


def _under(blocks: tuple[Block, ...], words: str) -> str | None:
    return next(block.heading for block in blocks if words in block.text)


def test_headings_printed_larger_head_the_paragraphs_after_them(manual: tuple[Block, ...]) -> None:
    assert _under(manual, "Format the disc") == (
        "Chapter 2. Offline upgrades > 2.1. Preparing the disc"
    )
    assert _under(manual, "Run the fetch") == (
        "Chapter 2. Offline upgrades > 2.2. Fetching the packages"
    )
    assert _under(manual, "has no network connection") == "Chapter 2. Offline upgrades"


def test_a_heading_is_no_paragraph_of_its_own(manual: tuple[Block, ...]) -> None:
    assert not [block for block in manual if "Preparing the disc" in block.text]


def test_a_path_split_at_its_dot_is_read_whole(manual: tuple[Block, ...]) -> None:
    assert "/etc/nsswitch.conf" in " ".join(block.text for block in manual)


def test_printed_markdown_headings_head_their_paragraphs(markdown: tuple[Block, ...]) -> None:
    assert _under(markdown, "domain socket") == "Wire protocol"
    assert _under(markdown, "hello method") == "Wire protocol > Hello handshake"
    assert [block.text for block in markdown if block.kind == CODE] == ["# apt-get update"]


@pytest.mark.parametrize(
    ("line", "heading"),
    [
        ("## Wire protocol", PrintedHeading(2, "Wire protocol")),
        ("# Index targets", PrintedHeading(1, "Index targets")),
        ("### Bye notification ###", PrintedHeading(3, "Bye notification")),
        (  # a FAQ's heading is its whole question
            "#### Sudo compiles and installs successfully but when I try to run it I get:",
            PrintedHeading(
                4, "Sudo compiles and installs successfully but when I try to run it I get:"
            ),
        ),
        ("# apt-get dist-upgrade", None),  # a command typed at a root prompt
        ("#include <stdio.h>", None),
    ],
)
def test_a_markdown_heading_line(line: str, heading: PrintedHeading | None) -> None:
    assert markdown_heading(line) == heading


def _line(key: tuple[int, int, int], text: str, *, height: int, confidence: float = 95.0):
    return [
        OcrWord(word, confidence, left=40 * i, top=key[2] * 60, width=30, height=height, line=key)
        for i, word in enumerate(text.split())
    ]


def test_a_large_line_inside_a_paragraph_or_of_one_word_is_no_heading() -> None:
    lines = {
        (1, 1, 1): _line((1, 1, 1), "Warning", height=50),
        (2, 1, 1): _line((2, 1, 1), "a table row read large | 12 |", height=50),
        (2, 1, 2): _line((2, 1, 2), "and the row under it", height=24),
        (3, 1, 1): _line((3, 1, 1), "A Heading Printed Large", height=50),
        (4, 1, 1): _line((4, 1, 1), "a logo read as letters", height=50, confidence=40.0),
        **{(5, 1, n): _line((5, 1, n), "body text of the page here", height=24) for n in (1, 2, 3)},
    }
    texts = {key: " ".join(w.text for w in words) for key, words in lines.items()}
    assert printed_headings(lines, texts) == {
        (3, 1, 1): PrintedHeading(1, "A Heading Printed Large")
    }
