"""A scanned page is cut into paragraphs and commands by the same joiner as a PDF's text
layer: hyphenated line ends re-joined, wrapped lines one paragraph, a command line its own
code block. The page is printed by Chromium as a plain-text file prints (its lines kept),
scanned by pdftoppm and read by the real Tesseract."""

from __future__ import annotations

import pytest

from apps.corpus.parsing import OcrOptions, parse_document
from apps.corpus.parsing.types import CODE, TEXT, Block
from tests.corpus import scans

OCR = OcrOptions(max_pages=2, page_timeout_s=60.0, dpi=200)
# Lines as a text file holds them. At 16 px the third paragraph's first line is too long for
# the page: Chromium wraps "fetches" onto a line of its own, and Tesseract, seeing a short
# line, starts a paragraph of its own after it, in the middle of the sentence.
PAGE = """Offline upgrades

The remote machine reads the APT config-
uration from the disc, fetches the packages
that the target machine still needs and
writes them back to the disc.
Take the disc back to the target and run:
# apt-get dist-upgrade
The status file must then be the local one.

The remote machine reads the configuration file from the disc and it fetches
a package list. It then writes every package that the target machine needs
to the disc, so that the target can install them.
"""


@pytest.fixture(scope="module")
def blocks() -> tuple[Block, ...]:
    scan = scans.printed_text_scan(PAGE)
    return parse_document(filename="offline.pdf", data=scan, ocr=OCR).blocks


def test_a_word_hyphenated_at_a_scanned_line_end_is_joined_again(
    blocks: tuple[Block, ...],
) -> None:
    text = " ".join(block.text for block in blocks)
    assert "the APT configuration from the disc" in text
    assert "config-" not in text


def test_a_sentence_wrapped_over_scanned_lines_is_one_paragraph(
    blocks: tuple[Block, ...],
) -> None:
    sentence = "The remote machine reads the configuration file from the disc and it fetches"
    [paragraph] = [block for block in blocks if block.text.startswith(sentence)]
    assert paragraph.kind == TEXT
    assert paragraph.text.endswith("so that the target can install them.")


def test_a_scanned_command_line_is_a_code_block_of_its_own(blocks: tuple[Block, ...]) -> None:
    [command] = [block for block in blocks if block.kind == CODE]
    assert command.text == "# apt-get dist-upgrade"
    assert command.page == 1 and command.ocr_confidence is not None
    prose = [block.text for block in blocks if block.kind == TEXT]
    assert "Take the disc back to the target and run:" in prose
    assert not any("apt-get" in text for text in prose)
